// The rulebook editor: every rule as a form, a raw view of the document,
// validation errors next to the fields they point to, optimistic saves,
// and a live preview of the draft and of any saved version.
import {
  $, h, api, page, ptr, uid, message, problemText, fmtTime, badge, vocabulary, stable, clone, fill,
} from './console.js';

await page();
const vocab = await vocabulary();

// loaded is the version the edits are based on, as the API returned it;
// doc is the working copy the forms edit in place.
let loaded = null;
let doc = null;
let view = 'form';
let rawBroken = null;
let errors = [];
let pointerIndex = new Map();

const DISCLOSURE_HELP = {
  none: 'Generic line only; the buyer sees commercially_declined and no suggestions.',
  category: 'The slug’s line; suggestions without figures.',
  range: 'Thresholds rounded up to coarse public buckets (“budgets of 2,500 USD or more”).',
  exact: 'Thresholds exactly as set.',
};

const PREDICATES = [
  {key: 'budget_below', label: 'Budget is below a floor', kind: 'budget',
    help: 'Holds when the buyer’s budget in this currency is below the minimum for the cheapest channel it asked for.',
    init: () => ({currency: 'USD', minimum: 1000})},
  {key: 'channels_offered', label: 'Channel is not carried', kind: 'enum', options: () => vocab.channels,
    help: 'Holds when the buyer asks only for channels that are not ticked.', init: () => []},
  {key: 'sold_out', label: 'Dates are sold out', kind: 'windows',
    help: 'Holds when the buyer’s flight overlaps one of these windows (both dates included).',
    init: () => [{start: today(), end: today()}]},
  {key: 'lead_time_days', label: 'Start is too soon', kind: 'int', unit: 'Days of lead time needed',
    help: 'Holds when the flight starts fewer than this many days after the request.', init: () => 3},
  {key: 'countries_served', label: 'Market is not served', kind: 'list', placeholder: 'US, CA, GB',
    help: 'Holds when the buyer asks only for markets outside this list (ISO country codes, comma separated).', init: () => []},
  {key: 'format_kinds_offered', label: 'Format kind is not offered', kind: 'enum', options: () => vocab.format_kinds,
    help: 'Holds when the buyer asks only for format kinds that are not ticked.', init: () => []},
  {key: 'industries', label: 'Brand is in an industry', kind: 'list', placeholder: 'gambling_betting, cannabis',
    help: 'Holds when the brand declares one of these AdCP industries or a sub-industry of one.', init: () => []},
  {key: 'keywords', label: 'Brief mentions', kind: 'list', placeholder: 'casino, payday loan',
    help: 'Holds when the brief contains one of these words or phrases, ignoring case.', init: () => []},
  {key: 'brand_domains', label: 'Brand domain is', kind: 'list', placeholder: 'brand.example',
    help: 'Holds when the brand’s domain is one of these or a subdomain of one.', init: () => []},
  {key: 'currencies_accepted', label: 'Currency is not accepted', kind: 'list', placeholder: 'USD, EUR',
    help: 'Holds when the buyer names currencies and none is in this list.', init: () => []},
  {key: 'delivery_types_offered', label: 'Delivery type is not offered', kind: 'enum', options: () => vocab.delivery_types,
    help: 'Holds when the buyer asks for a delivery type that is not ticked.', init: () => []},
];

const SAMPLES = [
  {name: 'Display campaign, 3,000 USD', brief: 'Display campaign for a coffee brand launch', budget: 3000, channels: 'display'},
  {name: 'Online video, 100 USD', brief: 'Video for a coffee brand launch', budget: 100},
  {name: 'Connected TV, 30,000 USD', brief: 'CTV for a streaming service launch', budget: 30000, channels: 'ctv'},
  {name: 'Holiday CTV flight', brief: 'CTV over the holidays for a toy retailer', budget: 60000, channels: 'ctv', start: '2026-12-20', end: '2026-12-31'},
  {name: 'Billboards (DOOH)', brief: 'Billboards for a coffee launch', budget: 20000, channels: 'dooh'},
  {name: 'Display in Germany', brief: 'Display for a bank in Germany', budget: 5000, markets: 'DE'},
  {name: 'Online casino', brief: 'Promote our online casino to sports fans', budget: 10000},
  {name: 'AdCP 3.1 buyer, 100 USD', brief: 'Video for a coffee brand launch', budget: 100, version: '3.1'},
];

function today() {
  return new Date().toISOString().slice(0, 10);
}

function splitList(s) {
  return String(s).split(',').map(x => x.trim()).filter(Boolean);
}

// numberOrRaw keeps what is not a number as typed, so that the API names
// the field in its answer instead of the console guessing.
function numberOrRaw(s) {
  const t = String(s).trim();
  if (t === '') return t;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// ---- Field builders. Each wrapper carries data-pointer (where API errors
// land) and each control carries the pointer as its name.

function errSlot() {
  return h('div', {class: 'field-error', role: 'alert'});
}

function textField({label, pointer, value, onInput, multiline, placeholder, hint, size, cls}) {
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

function numberField({label, pointer, value, onInput, hint, step, wrap = true}) {
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

function listField({label, pointer, value, onInput, placeholder, hint, wrap = true}) {
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

function selectField({label, pointer, value, options, onChange, hint}) {
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

function enumField({label, pointer, options, value, onChange, wrap = true}) {
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

function checkField({label, pointer, checked, onChange}) {
  const id = uid();
  const input = h('input', {type: 'checkbox', id, name: pointer, checked});
  input.addEventListener('change', () => onChange(input.checked));
  return h('div', {class: 'field field-check', 'data-pointer': pointer},
    h('label', {for: id}, input, ' ', label), errSlot());
}

function button(label, onclick, props = {}) {
  return h('button', {type: 'button', ...props, onclick}, label);
}

// ---- Rendering the document as forms.

function render() {
  if (view === 'form') {
    renderVoice();
    renderRules();
  }
  indexPointers();
  showErrors(errors);
  updateStatus();
}

function renderVoice() {
  const v = isObject(doc.voice) ? doc.voice : {};
  const setVoice = () => {
    doc.voice = v;
  };
  const templates = isObject(v.templates) ? v.templates : {};
  const tmplRows = Object.keys(templates).map(slug => {
    const p = ptr('voice', 'templates', slug);
    return h('div', {class: 'template-row'},
      textField({label: 'Template for ' + slug, pointer: p, value: templates[slug], multiline: true,
        onInput: val => { templates[slug] = val; v.templates = templates; setVoice(); }}),
      button('Remove', () => {
        delete templates[slug];
        if (Object.keys(templates).length) v.templates = templates; else delete v.templates;
        setVoice();
        rerender();
      }, {class: 'quiet', 'aria-label': 'Remove the template for ' + slug}));
  });
  const missing = vocab.slugs.filter(s => !(s.slug in templates));
  const addTmpl = h('select', {'aria-label': 'Add a template'}, h('option', {value: ''}, 'Add a template for a slug…'),
    missing.map(s => h('option', {value: s.slug}, s.slug)));
  addTmpl.addEventListener('change', () => {
    if (!addTmpl.value) return;
    const entry = vocab.slugs.find(s => s.slug === addTmpl.value);
    templates[addTmpl.value] = entry ? entry.reason : '';
    v.templates = templates;
    setVoice();
    rerender();
  });
  fill($('voice'), h('section', {class: 'card voice', 'data-pointer': '/voice'},
    h('div', {class: 'card-head'}, h('h2', {}, 'Voice'), h('span', {class: 'public-tag'}, 'public · how declines read')),
    errSlot(),
    h('div', {class: 'row'},
      textField({label: 'Seller name', pointer: '/voice/seller_name', value: v.seller_name,
        onInput: val => { if (val) v.seller_name = val; else delete v.seller_name; setVoice(); }}),
      selectField({label: 'Tone', pointer: '/voice/tone', value: v.tone || '',
        options: [{value: '', label: '(neutral)'}, ...vocab.tones.map(t => ({value: t, label: t}))],
        onChange: val => { if (val) v.tone = val; else delete v.tone; setVoice(); changed(); }})),
    tmplRows,
    h('div', {class: 'add-condition'}, addTmpl),
    h('small', {class: 'hint'}, 'Templates may use ' + vocab.template_placeholders.map(p => '{{' + p + '}}').join(', ') +
      '. A template whose placeholders the disclosure level does not reveal is not used.')));
}

function renderRules() {
  const rules = Array.isArray(doc.rules) ? doc.rules : [];
  fill($('rules'), ...rules.map((r, i) => isObject(r) ? ruleCard(r, i)
    : h('section', {class: 'card rule', 'data-pointer': ptr('rules', i)}, 'Rule ' + (i + 1) + ' is not an object; edit it in the raw view.', errSlot())));
}

function ruleCard(rule, i) {
  const p = ptr('rules', i);
  const n = doc.rules.length;
  const title = h('span', {class: 'rule-title'}, rule.name || 'Unnamed rule');
  const entry = vocab.slugs.find(s => s.slug === rule.decline?.slug);
  return h('section', {class: 'card rule' + (rule.disabled ? ' is-disabled' : ''), 'data-pointer': p, id: 'rule-' + i},
    h('div', {class: 'rule-head'},
      h('span', {class: 'rule-index'}, 'Rule ' + (i + 1)),
      title,
      rule.disabled ? badge('disabled', 'muted') : null,
      entry ? badge(entry.slug, 'slug') : null,
      h('span', {class: 'spacer'}),
      button('↑', () => move(i, -1), {class: 'quiet', disabled: i === 0, 'aria-label': 'Move rule ' + (i + 1) + ' up'}),
      button('↓', () => move(i, 1), {class: 'quiet', disabled: i === n - 1, 'aria-label': 'Move rule ' + (i + 1) + ' down'}),
      button('Delete', () => { doc.rules.splice(i, 1); rerender(); }, {class: 'quiet danger', 'aria-label': 'Delete rule ' + (i + 1)})),
    errSlot(),
    h('fieldset', {class: 'internal'},
      h('legend', {}, h('span', {class: 'internal-tag'}, 'Internal'), ' Confidential: never shown to buyers'),
      h('div', {class: 'row'},
        textField({label: 'Rule id', pointer: p + '/id', value: rule.id, onInput: v => { rule.id = v; }}),
        textField({label: 'Name', pointer: p + '/name', value: rule.name, cls: 'grow',
          onInput: v => { rule.name = v; title.textContent = v || 'Unnamed rule'; }})),
      textField({label: 'Notes', pointer: p + '/notes', value: rule.notes, multiline: true,
        onInput: v => { if (v) rule.notes = v; else delete rule.notes; }}),
      listField({label: 'Confidential terms', pointer: p + '/confidential_terms', value: rule.confidential_terms,
        placeholder: 'partner names, deal ids, codenames',
        hint: 'Further words that must never reach a buyer, comma separated.',
        onInput: a => { if (a.length) rule.confidential_terms = a; else delete rule.confidential_terms; }}),
      checkField({label: 'Disabled: kept in the document, never fires', pointer: p + '/disabled', checked: rule.disabled,
        onChange: c => { if (c) rule.disabled = true; else delete rule.disabled; rerender(); }})),
    whenSection(rule, p),
    declineSection(rule, p));
}

function whenSection(rule, p) {
  if (!isObject(rule.when)) rule.when = {};
  const w = rule.when;
  const wp = p + '/when';
  const known = new Set(['channels', ...PREDICATES.map(d => d.key)]);
  const other = Object.keys(w).filter(k => !known.has(k));
  const missing = PREDICATES.filter(d => !(d.key in w));
  const add = h('select', {'aria-label': 'Add a condition to rule ' + (Number(p.split('/')[2]) + 1)},
    h('option', {value: ''}, 'Add a condition…'), missing.map(d => h('option', {value: d.key}, d.label)));
  add.addEventListener('change', () => {
    const d = PREDICATES.find(x => x.key === add.value);
    if (!d) return;
    w[d.key] = d.init();
    rerender();
  });
  return h('fieldset', {class: 'when', 'data-pointer': wp},
    h('legend', {}, 'When: every condition must hold'),
    errSlot(),
    PREDICATES.filter(d => d.key in w).map(d => predicateBlock(d, w, wp)),
    other.length ? h('p', {class: 'hint'}, 'Also: ' + other.join(', ') + ' (edit these in the raw view).') : null,
    missing.length ? h('div', {class: 'add-condition'}, add) : null,
    h('details', {class: 'scope', open: Array.isArray(w.channels) && w.channels.length > 0},
      h('summary', {}, 'Channel scope' + (Array.isArray(w.channels) && w.channels.length ? ': ' + w.channels.join(', ') : ': all briefs')),
      enumField({label: 'Apply only to briefs that ask only for these channels (none ticked: every brief)', pointer: wp + '/channels',
        options: vocab.channels, value: w.channels,
        onChange: vals => { if (vals.length) w.channels = vals; else delete w.channels; }})));
}

function predicateBlock(def, w, wp) {
  const pp = wp + ptr(def.key);
  let body;
  switch (def.kind) {
  case 'budget':
    body = isObject(w.budget_below) ? budgetEditor(w.budget_below, pp) : h('p', {class: 'hint'}, 'Edit in the raw view.');
    break;
  case 'windows':
    body = Array.isArray(w.sold_out) ? windowsEditor(w.sold_out, pp) : h('p', {class: 'hint'}, 'Edit in the raw view.');
    break;
  case 'int':
    body = numberField({label: def.unit, pointer: pp, value: w[def.key], step: 1, wrap: false,
      onInput: v => { w[def.key] = numberOrRaw(v); }});
    break;
  case 'enum':
    body = enumField({label: 'Offered', pointer: pp, options: def.options(), value: w[def.key], wrap: false,
      onChange: vals => { w[def.key] = vals; }});
    break;
  default:
    body = listField({label: 'Values', pointer: pp, value: w[def.key], placeholder: def.placeholder, wrap: false,
      onInput: a => { w[def.key] = a; }});
  }
  return h('div', {class: 'predicate', 'data-pointer': pp},
    h('div', {class: 'predicate-head'}, h('strong', {}, def.label), h('span', {class: 'spacer'}),
      button('Remove', () => { delete w[def.key]; rerender(); }, {class: 'quiet', 'aria-label': 'Remove the condition: ' + def.label})),
    h('small', {class: 'hint'}, def.help),
    errSlot(),
    body);
}

function budgetEditor(b, pp) {
  const per = isObject(b.per_channel) ? b.per_channel : {};
  const rows = Object.keys(per).map(ch => h('div', {class: 'per-channel-row'},
    numberField({label: ch, pointer: pp + ptr('per_channel', ch), value: per[ch],
      onInput: v => { per[ch] = numberOrRaw(v); b.per_channel = per; }}),
    button('Remove', () => {
      delete per[ch];
      if (Object.keys(per).length) b.per_channel = per; else delete b.per_channel;
      rerender();
    }, {class: 'quiet', 'aria-label': 'Remove the ' + ch + ' minimum'})));
  const free = vocab.channels.filter(c => !(c in per));
  const add = h('select', {'aria-label': 'Add a channel minimum'}, h('option', {value: ''}, 'Add a channel minimum…'),
    free.map(c => h('option', {value: c}, c)));
  add.addEventListener('change', () => {
    if (!add.value) return;
    per[add.value] = typeof b.minimum === 'number' ? b.minimum : 0;
    b.per_channel = per;
    rerender();
  });
  return h('div', {class: 'budget'},
    h('div', {class: 'row'},
      textField({label: 'Currency', pointer: pp + '/currency', value: b.currency, size: 5, cls: 'narrow',
        onInput: v => { b.currency = v; }}),
      numberField({label: 'Minimum', pointer: pp + '/minimum', value: b.minimum,
        hint: 'For channels without a minimum of their own.',
        onInput: v => { b.minimum = numberOrRaw(v); }})),
    h('div', {class: 'per-channel', 'data-pointer': pp + '/per_channel'},
      h('span', {class: 'label'}, 'Per-channel minimums'),
      errSlot(),
      h('div', {class: 'per-channel-grid'}, rows),
      free.length ? h('div', {class: 'add-condition'}, add) : null));
}

function windowsEditor(list, pp) {
  const rows = list.map((win, i) => {
    const wp = pp + ptr(i);
    if (!isObject(win)) return h('div', {'data-pointer': wp}, 'Window ' + (i + 1) + ' is not an object; edit it in the raw view.', errSlot());
    const date = (key, label) => {
      const id = uid();
      const input = h('input', {id, type: 'date', name: wp + ptr(key)});
      input.value = win[key] || '';
      input.addEventListener('input', () => { win[key] = input.value; changed(); });
      return h('div', {class: 'field', 'data-pointer': wp + ptr(key)}, h('label', {for: id}, label), input, errSlot());
    };
    return h('div', {class: 'window-row', 'data-pointer': wp},
      date('start', 'From'), date('end', 'To (included)'),
      listField({label: 'Only for channels (optional)', pointer: wp + '/channels', value: win.channels, placeholder: 'ctv',
        onInput: a => { if (a.length) win.channels = a; else delete win.channels; }}),
      button('Remove', () => { list.splice(i, 1); rerender(); }, {class: 'quiet', 'aria-label': 'Remove window ' + (i + 1)}),
      errSlot());
  });
  return h('div', {class: 'windows'}, rows,
    button('Add a window', () => { list.push({start: today(), end: today()}); rerender(); }));
}

function declineSection(rule, p) {
  if (!isObject(rule.decline)) rule.decline = {};
  const d = rule.decline;
  const dp = p + '/decline';
  const entry = vocab.slugs.find(s => s.slug === d.slug);
  const kinds = [...new Set([...(entry ? entry.suggests : []), ...(Array.isArray(d.suggest) ? d.suggest : [])])];
  return h('fieldset', {class: 'decline', 'data-pointer': dp},
    h('legend', {}, 'Decline: what the buyer is told ', h('span', {class: 'public-tag'}, 'public')),
    errSlot(),
    h('div', {class: 'row'},
      selectField({label: 'Slug', pointer: dp + '/slug', value: d.slug,
        options: vocab.slugs.map(s => ({value: s.slug, label: s.slug})),
        hint: entry ? entry.reason + (entry.fixable ? ' Fixable.' : ' Final: carries no suggestions.') : '',
        onChange: v => {
          d.slug = v;
          const e = vocab.slugs.find(s => s.slug === v);
          if (Array.isArray(d.suggest)) {
            d.suggest = d.suggest.filter(k => e && e.suggests.includes(k));
            if (!d.suggest.length) delete d.suggest;
          }
          rerender();
        }}),
      selectField({label: 'Disclosure', pointer: dp + '/disclosure', value: d.disclosure,
        options: vocab.disclosure_levels.map(l => ({value: l, label: l})),
        hint: DISCLOSURE_HELP[d.disclosure] || '',
        onChange: v => { d.disclosure = v; rerender(); }})),
    kinds.length
      ? enumField({label: 'Suggestions it may offer', pointer: dp + '/suggest', options: kinds, value: d.suggest,
        onChange: vals => { if (vals.length) d.suggest = vals; else delete d.suggest; }})
      : h('p', {class: 'hint'}, 'This slug carries no suggestions: the decline is final.'));
}

function move(i, delta) {
  const j = i + delta;
  if (j < 0 || j >= doc.rules.length) return;
  [doc.rules[i], doc.rules[j]] = [doc.rules[j], doc.rules[i]];
  rerender();
}

function addRule() {
  if (!Array.isArray(doc.rules)) doc.rules = [];
  doc.rules.push({id: '', name: '', when: {keywords: []}, decline: {slug: 'commercially_declined', disclosure: 'category'}});
  rerender();
  const last = $('rule-' + (doc.rules.length - 1));
  if (last) {
    last.scrollIntoView({block: 'start'});
    last.querySelector('input')?.focus();
  }
}

function rerender() {
  render();
  changed();
}

// ---- Errors from the API, placed by JSON pointer.

function indexPointers() {
  pointerIndex = new Map();
  for (const el of document.querySelectorAll('.editor [data-pointer]')) {
    if (el.closest('[hidden]')) continue;
    if (!pointerIndex.has(el.dataset.pointer)) pointerIndex.set(el.dataset.pointer, el);
  }
}

// target finds the element for a pointer, or for its nearest ancestor.
function target(pointer) {
  let q = pointer;
  for (;;) {
    if (pointerIndex.has(q)) return pointerIndex.get(q);
    if (q === '') return null;
    q = q.slice(0, q.lastIndexOf('/'));
  }
}

function showErrors(list) {
  errors = list || [];
  for (const el of document.querySelectorAll('.editor .field-error')) el.replaceChildren();
  for (const el of document.querySelectorAll('.editor .invalid')) el.classList.remove('invalid');
  for (const el of document.querySelectorAll('.editor [aria-invalid]')) el.removeAttribute('aria-invalid');
  const summary = $('errors-summary');
  summary.replaceChildren();
  if (!errors.length) {
    summary.hidden = true;
    return;
  }
  const items = errors.map(e => {
    const pointer = e.pointer || '';
    const t = target(pointer);
    if (t) {
      t.classList.add('invalid');
      t.querySelector(':scope > .field-error')?.append(h('span', {}, e.detail));
      for (const c of t.querySelectorAll('input, select, textarea')) {
        if (c.name === pointer || t.dataset.pointer === pointer) c.setAttribute('aria-invalid', 'true');
      }
    }
    const rule = /^\/rules\/(\d+)(?:\/|$)/.exec(pointer);
    return h('li', {}, button(pointer || '(the document)', () => reveal(pointer), {class: 'link'}),
      rule ? ' (rule ' + (Number(rule[1]) + 1) + ')' : '', ' ', e.detail);
  });
  summary.append(h('strong', {}, errors.length === 1 ? '1 problem' : errors.length + ' problems'),
    ', each shown next to the field it points to:', h('ul', {}, items));
  summary.hidden = false;
}

function reveal(pointer) {
  const t = target(pointer);
  if (!t) return;
  for (let d = t.closest('details'); d; d = d.parentElement?.closest('details')) d.open = true;
  t.scrollIntoView({block: 'center'});
  t.querySelector('input, select, textarea')?.focus();
}

function withoutPrefix(list, prefix) {
  return (list || []).map(e => ({...e, pointer: (e.pointer || '').startsWith(prefix) ? e.pointer.slice(prefix.length) : e.pointer}));
}

// ---- State.

function isDirty() {
  if (!loaded) return false;
  if (view === 'raw' && rawBroken) return true;
  return stable(doc) !== stable(loaded.rulebook);
}

function updateStatus() {
  $('version-status').textContent = loaded.version
    ? 'Version ' + loaded.version + ' · saved ' + fmtTime(loaded.created_at) + ' by ' + loaded.author + (loaded.note ? ' · “' + loaded.note + '”' : '')
    : 'No rulebook saved yet';
  $('dirty').hidden = !isDirty();
  $('raw-format').textContent = vocab.format;
}

function changed() {
  updateStatus();
  schedulePreview();
}

async function load() {
  const r = await api('GET', '/rulebook');
  if (r.ok) {
    loaded = r.data;
  } else if (r.status === 404) {
    loaded = {version: 0, rulebook: {format: vocab.format, voice: {}, rules: []}};
    message('warn', 'This publisher has no rulebook yet. Until one is saved, buyers get the error arm.');
  } else {
    message('error', 'Could not load the rulebook: ' + problemText(r.problem));
    return;
  }
  doc = clone(loaded.rulebook);
  rawBroken = null;
  errors = [];
  if (view === 'raw') $('raw').value = JSON.stringify(doc, null, 2);
  render();
  await loadVersions();
  schedulePreview(0);
}

async function loadVersions() {
  const sel = $('saved-version');
  const r = await api('GET', '/rulebook/versions');
  const list = r.ok ? r.data.versions : [];
  fill(sel, ...list.map(v => h('option', {value: v.version, selected: v.version === loaded.version},
    'version ' + v.version + (v.current ? ' (in force)' : ''))));
  sel.disabled = list.length === 0;
  $('target-saved').disabled = list.length === 0;
}

async function save() {
  const btn = $('save');
  btn.disabled = true;
  try {
    const since = loaded.version;
    const body = view === 'raw' ? $('raw').value : doc;
    const note = $('note').value.trim();
    const headers = {};
    if (note) {
      if (/[^\x20-\x7e\xa0-\xff]/.test(note)) {
        message('error', 'Not saved: the change note may use only Latin letters, digits and punctuation.');
        return;
      }
      headers['X-Change-Note'] = note;
    }
    const r = await api('PUT', '/rulebook', {body, ifMatch: since, headers});
    if (r.ok) {
      loaded = r.data;
      doc = clone(loaded.rulebook);
      rawBroken = null;
      if (view === 'raw') $('raw').value = JSON.stringify(doc, null, 2);
      $('note').value = '';
      errors = [];
      render();
      message('ok', 'Saved as version ' + loaded.version + '. Buyers get it from their next call.');
      await loadVersions();
      schedulePreview(0);
      return;
    }
    if (r.status === 412) {
      const cur = r.problem?.current_version;
      message('error',
        'Not saved: someone else saved version ' + cur + ' since you loaded version ' + since + '; reload to see their changes. ' +
        'Nothing was overwritten, and your edits are still on this page.',
        button('Reload version ' + cur + ' (discards your edits)', () => { message(''); load(); }, {id: 'reload-stale'}));
      return;
    }
    if (r.status === 422) {
      showErrors(r.problem.errors?.length ? r.problem.errors : [{pointer: r.problem.pointer || '', detail: r.problem.detail}]);
      message('error', 'Not saved: the rulebook has problems, shown next to the fields they point to. Nothing was saved.');
      return;
    }
    message('error', 'Not saved: ' + problemText(r.problem));
  } finally {
    btn.disabled = false;
  }
}

function showView(v) {
  if (v === view) return;
  if (v === 'form') {
    if (rawBroken) {
      message('error', 'The document is not valid JSON yet (' + rawBroken + '). Fix it before switching to the form.');
      return;
    }
    if (!isObject(doc)) {
      message('error', 'The form needs the document to be a JSON object; fix it in the raw view.');
      return;
    }
  } else {
    $('raw').value = JSON.stringify(doc, null, 2);
  }
  view = v;
  $('form-view').hidden = v !== 'form';
  $('raw-view').hidden = v !== 'raw';
  $('view-form').setAttribute('aria-pressed', String(v === 'form'));
  $('view-raw').setAttribute('aria-pressed', String(v === 'raw'));
  render();
}

// ---- Preview.

let previewTimer = 0;
let previewSeq = 0;

function fillSample(s) {
  $('brief').value = s.brief || '';
  $('budget').value = s.budget ?? '';
  $('currency').value = s.currency || 'USD';
  $('channels').value = s.channels || '';
  $('markets').value = s.markets || '';
  $('start').value = s.start || '';
  $('end').value = s.end || '';
  $('brand').value = s.brand || '';
  $('industries').value = s.industries || '';
  $('adcp-version').value = s.version || vocab.adcp_versions[vocab.adcp_versions.length - 1];
  rebuildRequest();
}

function formRequest() {
  const r = {adcp_version: $('adcp-version').value, buying_mode: 'brief', brief: $('brief').value};
  const f = {};
  const budget = $('budget').value.trim();
  if (budget !== '') f.budget_range = {max: Number(budget), currency: $('currency').value.trim().toUpperCase() || 'USD'};
  const ch = splitList($('channels').value);
  if (ch.length) f.channels = ch;
  if ($('start').value) f.start_date = $('start').value;
  if ($('end').value) f.end_date = $('end').value;
  if (Object.keys(f).length) r.filters = f;
  const mk = splitList($('markets').value).map(s => s.toUpperCase());
  if (mk.length) r.targeting_overlay = {geo_countries: mk};
  const domain = $('brand').value.trim();
  const ind = splitList($('industries').value);
  if (domain || ind.length) {
    r.brand = {};
    if (domain) r.brand.domain = domain;
    if (ind.length) r.brand.industries = ind;
  }
  return r;
}

function rebuildRequest() {
  $('request-json').value = JSON.stringify(formRequest(), null, 2);
  schedulePreview(0);
}

function currentRequest() {
  const err = $('request-error');
  err.textContent = '';
  try {
    const r = JSON.parse($('request-json').value);
    if (!isObject(r)) throw new Error('the request must be a JSON object');
    return r;
  } catch (e) {
    err.textContent = 'The request is not valid JSON: ' + e.message;
    return null;
  }
}

function schedulePreview(ms = 350) {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(runPreview, ms);
}

async function runPreview() {
  if (!loaded) return;
  const seq = ++previewSeq;
  const req = currentRequest();
  if (!req) return;
  const target = document.querySelector('input[name=target]:checked').value;
  const savedV = Number($('saved-version').value) || loaded.version;
  document.body.classList.add('previewing');
  const draftCall = view === 'raw' && rawBroken ? Promise.resolve(null)
    : api('POST', '/rulebook/preview', {body: {rulebook: doc, request: req}});
  const savedCall = savedV > 0 ? api('POST', '/preview?version=' + encodeURIComponent(savedV), {body: req}) : Promise.resolve(null);
  const [draft, saved] = await Promise.all([draftCall, savedCall]);
  if (seq !== previewSeq) return;
  document.body.classList.remove('previewing');
  if (draft && draft.status === 422) showErrors(withoutPrefix(draft.problem.errors, '/rulebook'));
  else if (draft && draft.ok) showErrors([]);

  const statusOf = (r, id) => {
    let b;
    if (!r) b = h('span', {}, '—');
    else if (r.status === 422) b = badge('not valid', 'invalid');
    else if (!r.ok) b = badge('error', 'failed');
    else b = badge(r.data.buyer.status);
    b.id = id;
    return b;
  };
  fill($('compare'), 
    h('span', {}, savedV > 0 ? 'Saved version ' + savedV + ': ' : 'No saved version: '), statusOf(saved, 'compare-saved'),
    h('span', {class: 'arrow'}, ' → '),
    h('span', {}, 'Your draft' + (isDirty() ? ' (unsaved)' : ' (no edits)') + ': '), statusOf(draft, 'compare-draft'));

  const shown = target === 'draft' ? draft : saved;
  renderPreview(shown, req);
}

function renderPreview(r, req) {
  const dec = $('decision');
  const buyer = $('buyer');
  if (!r) {
    fill(dec, h('p', {class: 'hint'}, 'Nothing to preview yet.'));
    buyer.replaceChildren();
    return;
  }
  if (r.status === 422) {
    const n = r.problem.errors?.length || 1;
    fill(dec, h('p', {class: 'warn-text'}, 'The draft is not valid yet: ' + n + (n === 1 ? ' problem' : ' problems') + ', shown next to the fields.'));
    fill(buyer, h('p', {class: 'hint'}, 'A rulebook that is not valid cannot be saved, so no buyer would see it.'));
    return;
  }
  if (!r.ok) {
    fill(dec, h('p', {class: 'warn-text'}, problemText(r.problem)));
    buyer.replaceChildren();
    return;
  }
  renderDecision(r.data, req);
  renderBuyer(r.data.buyer);
}

function facts(pairs) {
  return h('dl', {class: 'facts'}, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function renderDecision(data, req) {
  const d = data.decision || {};
  const fired = d.rules_fired || [];
  const arm = badge(data.buyer.status);
  arm.id = 'decision-status';
  const excluded = Object.entries(d.excluded_by || {}).map(([k, v]) => k + ' ' + v).join(', ');
  fill($('decision'), 
    facts([
      ['Outcome', arm],
      ['Rulebook', data.draft ? 'your draft (not saved)' : 'version ' + data.rulebook_version],
      ['Catalogue', 'version ' + d.catalogue_version],
      ['AdCP served', d.served_version || '—'],
      ['Brief', h('span', {class: 'brief-echo', id: 'decision-brief'}, typeof req.brief === 'string' ? req.brief : JSON.stringify(req.brief ?? ''))],
      d.disclosure_cap ? ['Disclosure cap', d.disclosure_cap] : null,
      d.products_considered ? ['Products', d.products_matched + ' matched of ' + d.products_considered + (excluded ? '; excluded by ' + excluded : '')] : null,
      d.forced ? ['Forced', 'yes (compliance directive)'] : null,
      d.error ? ['Error', h('span', {class: 'warn-text'}, d.error)] : null,
    ]),
    h('h4', {}, 'Rules fired'),
    fired.length
      ? h('ol', {class: 'fired', id: 'rules-fired'}, fired.map((f, i) => h('li', {class: i === 0 ? 'leads' : ''},
        h('div', {class: 'fired-head'}, h('code', {class: 'rule-id'}, f.id), i === 0 ? badge('leads the decline', 'muted') : null),
        h('div', {class: 'rule-name'}, f.name),
        h('div', {class: 'hint'}, f.slug + ' · disclosure ' + f.disclosure))))
      : h('p', {class: 'hint', id: 'rules-fired'}, 'No rule fired.'),
    (d.suggestions_offered || []).length
      ? [h('h4', {}, 'Suggestions offered (' + d.suggestion_checks + ' checked)'),
        h('ul', {}, d.suggestions_offered.map(s => h('li', {}, h('code', {}, (s.kinds || []).join('+')), ' ', s.text)))]
      : null);
}

function renderBuyer(b) {
  const p = b.payload && typeof b.payload === 'object' ? b.payload : {};
  const status = badge(b.status);
  status.id = 'buyer-status';
  const products = Array.isArray(p.products) ? p.products : null;
  const errs = Array.isArray(p.errors) ? p.errors : null;
  let pretty = b.payload_text;
  try {
    pretty = JSON.stringify(JSON.parse(b.payload_text), null, 2);
  } catch { /* shown as sent */ }
  fill($('buyer'), 
    facts([['Status', status], ['MCP isError', String(b.mcp_is_error)]]),
    typeof p.reason === 'string' ? [h('h4', {}, 'Reason'), h('p', {class: 'reason', id: 'buyer-reason'}, p.reason)] : null,
    Array.isArray(p.suggestions) && p.suggestions.length
      ? [h('h4', {}, 'Suggestions'), h('ul', {id: 'buyer-suggestions'}, p.suggestions.map(s => h('li', {}, typeof s === 'string' ? s : JSON.stringify(s))))]
      : null,
    products ? [h('h4', {}, products.length + (products.length === 1 ? ' product' : ' products')),
      h('ul', {}, products.slice(0, 12).map(x => h('li', {}, String(x.name || x.product_id || ''))))] : null,
    errs ? [h('h4', {}, 'Errors'), h('ul', {}, errs.map(e => h('li', {}, h('code', {}, String(e.code || '')), ' ', String(e.message || ''))))] : null,
    h('h4', {}, 'Payload'),
    h('pre', {class: 'payload', id: 'buyer-payload'}, pretty),
    h('details', {}, h('summary', {}, 'Exact bytes (MCP content[0].text, A2A data part)'), h('pre', {class: 'payload'}, b.payload_text)),
    h('details', {}, h('summary', {}, 'MCP tools/call result'), h('pre', {class: 'payload'}, JSON.stringify(b.mcp_result, null, 2))));
}

// ---- Wiring.

$('save').addEventListener('click', save);
$('discard').addEventListener('click', () => {
  doc = clone(loaded.rulebook);
  rawBroken = null;
  if (view === 'raw') $('raw').value = JSON.stringify(doc, null, 2);
  errors = [];
  message('info', 'Your edits were discarded; the form shows version ' + loaded.version + ' again.');
  rerender();
});
$('add-rule').addEventListener('click', addRule);
$('view-form').addEventListener('click', () => showView('form'));
$('view-raw').addEventListener('click', () => showView('raw'));
$('raw').addEventListener('input', () => {
  const slot = $('raw').parentElement.querySelector('.field-error');
  try {
    doc = JSON.parse($('raw').value);
    rawBroken = null;
    slot.textContent = '';
  } catch (e) {
    rawBroken = e.message;
    slot.textContent = 'Not valid JSON: ' + e.message;
  }
  changed();
});

fill($('sample'), ...SAMPLES.map((s, i) => h('option', {value: i}, s.name)), h('option', {value: 'custom'}, 'Your own brief'));
fill($('adcp-version'), ...vocab.adcp_versions.map(v => h('option', {value: v},
  v + (v.startsWith('3.2') ? ' (rejected arm)' : ' (declines as errors)'))));
$('sample').addEventListener('change', () => {
  const s = SAMPLES[Number($('sample').value)];
  if (s) fillSample(s);
});
for (const id of ['brief', 'budget', 'currency', 'channels', 'markets', 'start', 'end', 'brand', 'industries', 'adcp-version']) {
  $(id).addEventListener('input', () => {
    $('sample').value = 'custom';
    rebuildRequest();
  });
}
$('request-json').addEventListener('input', () => schedulePreview());
for (const el of document.querySelectorAll('input[name=target]')) el.addEventListener('change', () => schedulePreview(0));
$('saved-version').addEventListener('change', () => {
  $('target-saved').checked = true;
  schedulePreview(0);
});
$('brief-form').addEventListener('submit', ev => ev.preventDefault());
addEventListener('beforeunload', ev => {
  if (isDirty()) ev.preventDefault();
});

fillSample(SAMPLES[0]);
await load();
