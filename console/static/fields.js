// Form fields the console's editors share. Each field's wrapper carries
// data-pointer, where the admin API's errors for that field land, and each
// control carries the pointer as its name. Fields only ever put data into
// form values and text nodes.
import {h, uid} from './console.js';

// edited is called after every edit a field makes; the page sets it.
let edited = () => {};

export function onEdit(fn) {
  edited = fn;
}

function changed() {
  edited();
}

export function today() {
  return new Date().toISOString().slice(0, 10);
}

export function splitList(s) {
  return String(s).split(',').map(x => x.trim()).filter(Boolean);
}

// numberOrRaw keeps what is not a number as typed, so that the API names
// the field in its answer instead of the console guessing.
export function numberOrRaw(s) {
  const t = String(s).trim();
  if (t === '') return t;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

export function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function errSlot() {
  return h('div', {class: 'field-error', role: 'alert'});
}

export function textField({label, pointer, value, onInput, multiline, placeholder, hint, size, cls}) {
  const id = uid();
  const input = multiline
    ? h('textarea', {id, name: pointer, rows: 3, placeholder})
    : h('input', {id, name: pointer, type: 'text', placeholder, size, spellcheck: 'false'});
  input.value = value ?? '';
  input.addEventListener('input', () => {
    onInput(input.value);
    changed();
  });
  return h('div', {class: 'field ' + (cls || ''), 'data-pointer': pointer},
    h('label', {for: id}, label), input, hint ? h('small', {class: 'hint'}, hint) : null, errSlot());
}

export function numberField({label, pointer, value, onInput, hint, step, wrap = true}) {
  const id = uid();
  const input = h('input', {id, name: pointer, type: 'number', step: step || 'any', min: 0});
  input.value = value ?? '';
  input.addEventListener('input', () => {
    onInput(input.value);
    changed();
  });
  return h('div', {class: 'field field-number', 'data-pointer': wrap ? pointer : undefined},
    h('label', {for: id}, label), input, hint ? h('small', {class: 'hint'}, hint) : null, wrap ? errSlot() : null);
}

export function listField({label, pointer, value, onInput, placeholder, hint, wrap = true}) {
  const id = uid();
  const input = h('input', {id, name: pointer, type: 'text', placeholder, spellcheck: 'false'});
  input.value = (value || []).join(', ');
  input.addEventListener('input', () => {
    onInput(splitList(input.value));
    changed();
  });
  return h('div', {class: 'field', 'data-pointer': wrap ? pointer : undefined},
    h('label', {for: id}, label), input, hint ? h('small', {class: 'hint'}, hint) : null, wrap ? errSlot() : null);
}

export function selectField({label, pointer, value, options, onChange, hint}) {
  const id = uid();
  const opts = options.map(o => h('option', {value: o.value, selected: o.value === value}, o.label));
  if (value !== undefined && value !== '' && !options.some(o => o.value === value)) {
    opts.unshift(h('option', {value, selected: true}, value + ' (not recognised)'));
  }
  const sel = h('select', {id, name: pointer}, opts);
  sel.addEventListener('change', () => onChange(sel.value));
  return h('div', {class: 'field', 'data-pointer': pointer},
    h('label', {for: id}, label), sel, hint ? h('small', {class: 'hint'}, hint) : null, errSlot());
}

export function enumField({label, pointer, options, value, onChange, wrap = true}) {
  const cur = new Set(value || []);
  const all = [...options, ...[...cur].filter(v => !options.includes(v))];
  const inputs = all.map(o => h('input', {type: 'checkbox', id: uid(), value: o, checked: cur.has(o), name: pointer}));
  const group = h('div', {class: 'chips', role: 'group', 'aria-label': label},
    all.map((o, i) => h('label', {class: 'chip', for: inputs[i].id}, inputs[i], ' ', o)));
  group.addEventListener('change', () => {
    onChange(all.filter((o, i) => inputs[i].checked));
    changed();
  });
  return h('div', {class: 'field field-enum', 'data-pointer': wrap ? pointer : undefined},
    h('span', {class: 'label'}, label), group, wrap ? errSlot() : null);
}

export function checkField({label, pointer, checked, onChange}) {
  const id = uid();
  const input = h('input', {type: 'checkbox', id, name: pointer, checked});
  input.addEventListener('change', () => onChange(input.checked));
  return h('div', {class: 'field field-check', 'data-pointer': pointer},
    h('label', {for: id}, input, ' ', label), errSlot());
}

export function button(label, onclick, props = {}) {
  return h('button', {type: 'button', ...props, onclick}, label);
}
