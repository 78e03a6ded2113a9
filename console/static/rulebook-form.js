// The rulebook as forms: the voice, and each rule's confidential parts
// (marked internal), its condition's predicates and its public decline.
// The forms edit the working document in place; state says where it is
// and what to do after an edit.
import {$, h, ptr, uid, badge, fill} from './console.js';
import {
  today, splitList, numberOrRaw, isObject, errSlot, textField, numberField, listField, selectField, enumField, checkField, button,
} from './fields.js';

// state is the editor's: {doc, vocab, rerender(), changed()}.
let state;

export function bindForm(s) {
  state = s;
}

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
  {key: 'channels_offered', label: 'Channel is not carried', kind: 'enum', options: () => state.vocab.channels,
    help: 'Holds when the buyer asks only for channels that are not ticked.', init: () => []},
  {key: 'sold_out', label: 'Dates are sold out', kind: 'windows',
    help: 'Holds when the buyer’s flight overlaps one of these windows (both dates included).',
    init: () => [{start: today(), end: today()}]},
  {key: 'lead_time_days', label: 'Start is too soon', kind: 'int', unit: 'Days of lead time needed',
    help: 'Holds when the flight starts fewer than this many days after the request.', init: () => 3},
  {key: 'countries_served', label: 'Market is not served', kind: 'list', placeholder: 'US, CA, GB',
    help: 'Holds when the buyer asks only for markets outside this list (ISO country codes, comma separated).', init: () => []},
  {key: 'format_kinds_offered', label: 'Format kind is not offered', kind: 'enum', options: () => state.vocab.format_kinds,
    help: 'Holds when the buyer asks only for format kinds that are not ticked.', init: () => []},
  {key: 'industries', label: 'Brand is in an industry', kind: 'list', placeholder: 'gambling_betting, cannabis',
    help: 'Holds when the brand declares one of these AdCP industries or a sub-industry of one.', init: () => []},
  {key: 'keywords', label: 'Brief mentions', kind: 'list', placeholder: 'casino, payday loan',
    help: 'Holds when the brief contains one of these words or phrases, ignoring case.', init: () => []},
  {key: 'brand_domains', label: 'Brand domain is', kind: 'list', placeholder: 'brand.example',
    help: 'Holds when the brand’s domain is one of these or a subdomain of one.', init: () => []},
  {key: 'currencies_accepted', label: 'Currency is not accepted', kind: 'list', placeholder: 'USD, EUR',
    help: 'Holds when the buyer names currencies and none is in this list.', init: () => []},
  {key: 'delivery_types_offered', label: 'Delivery type is not offered', kind: 'enum', options: () => state.vocab.delivery_types,
    help: 'Holds when the buyer asks for a delivery type that is not ticked.', init: () => []},
];


export function renderVoice() {
  const v = isObject(state.doc.voice) ? state.doc.voice : {};
  const setVoice = () => {
    state.doc.voice = v;
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
        state.rerender();
      }, {class: 'quiet', 'aria-label': 'Remove the template for ' + slug}));
  });
  const missing = state.vocab.slugs.filter(s => !(s.slug in templates));
  const addTmpl = h('select', {'aria-label': 'Add a template'}, h('option', {value: ''}, 'Add a template for a slug…'),
    missing.map(s => h('option', {value: s.slug}, s.slug)));
  addTmpl.addEventListener('change', () => {
    if (!addTmpl.value) return;
    const entry = state.vocab.slugs.find(s => s.slug === addTmpl.value);
    templates[addTmpl.value] = entry ? entry.reason : '';
    v.templates = templates;
    setVoice();
    state.rerender();
  });
  fill($('voice'), h('section', {class: 'card voice', 'data-pointer': '/voice'},
    h('div', {class: 'card-head'}, h('h2', {}, 'Voice'), h('span', {class: 'public-tag'}, 'public · how declines read')),
    errSlot(),
    h('div', {class: 'row'},
      textField({label: 'Seller name', pointer: '/voice/seller_name', value: v.seller_name,
        onInput: val => { if (val) v.seller_name = val; else delete v.seller_name; setVoice(); }}),
      selectField({label: 'Tone', pointer: '/voice/tone', value: v.tone || '',
        options: [{value: '', label: '(neutral)'}, ...state.vocab.tones.map(t => ({value: t, label: t}))],
        onChange: val => { if (val) v.tone = val; else delete v.tone; setVoice(); state.changed(); }})),
    tmplRows,
    h('div', {class: 'add-condition'}, addTmpl),
    h('small', {class: 'hint'}, 'Templates may use ' + state.vocab.template_placeholders.map(p => '{{' + p + '}}').join(', ') +
      '. A template whose placeholders the disclosure level does not reveal is not used.')));
}

export function renderRules() {
  const rules = Array.isArray(state.doc.rules) ? state.doc.rules : [];
  fill($('rules'), ...rules.map((r, i) => isObject(r) ? ruleCard(r, i)
    : h('section', {class: 'card rule', 'data-pointer': ptr('rules', i)}, 'Rule ' + (i + 1) + ' is not an object; edit it in the raw view.', errSlot())));
}

function ruleCard(rule, i) {
  const p = ptr('rules', i);
  const n = state.doc.rules.length;
  const title = h('span', {class: 'rule-title'}, rule.name || 'Unnamed rule');
  const entry = state.vocab.slugs.find(s => s.slug === rule.decline?.slug);
  return h('section', {class: 'card rule' + (rule.disabled ? ' is-disabled' : ''), 'data-pointer': p, id: 'rule-' + i},
    h('div', {class: 'rule-head'},
      h('span', {class: 'rule-index'}, 'Rule ' + (i + 1)),
      title,
      rule.disabled ? badge('disabled', 'muted') : null,
      entry ? badge(entry.slug, 'slug') : null,
      h('span', {class: 'spacer'}),
      button('↑', () => move(i, -1), {class: 'quiet', disabled: i === 0, 'aria-label': 'Move rule ' + (i + 1) + ' up'}),
      button('↓', () => move(i, 1), {class: 'quiet', disabled: i === n - 1, 'aria-label': 'Move rule ' + (i + 1) + ' down'}),
      button('Delete', () => { state.doc.rules.splice(i, 1); state.rerender(); }, {class: 'quiet danger', 'aria-label': 'Delete rule ' + (i + 1)})),
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
        onChange: c => { if (c) rule.disabled = true; else delete rule.disabled; state.rerender(); }})),
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
    state.rerender();
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
        options: state.vocab.channels, value: w.channels,
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
      button('Remove', () => { delete w[def.key]; state.rerender(); }, {class: 'quiet', 'aria-label': 'Remove the condition: ' + def.label})),
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
      state.rerender();
    }, {class: 'quiet', 'aria-label': 'Remove the ' + ch + ' minimum'})));
  const free = state.vocab.channels.filter(c => !(c in per));
  const add = h('select', {'aria-label': 'Add a channel minimum'}, h('option', {value: ''}, 'Add a channel minimum…'),
    free.map(c => h('option', {value: c}, c)));
  add.addEventListener('change', () => {
    if (!add.value) return;
    per[add.value] = typeof b.minimum === 'number' ? b.minimum : 0;
    b.per_channel = per;
    state.rerender();
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
      input.addEventListener('input', () => { win[key] = input.value; state.changed(); });
      return h('div', {class: 'field', 'data-pointer': wp + ptr(key)}, h('label', {for: id}, label), input, errSlot());
    };
    return h('div', {class: 'window-row', 'data-pointer': wp},
      date('start', 'From'), date('end', 'To (included)'),
      listField({label: 'Only for channels (optional)', pointer: wp + '/channels', value: win.channels, placeholder: 'ctv',
        onInput: a => { if (a.length) win.channels = a; else delete win.channels; }}),
      button('Remove', () => { list.splice(i, 1); state.rerender(); }, {class: 'quiet', 'aria-label': 'Remove window ' + (i + 1)}),
      errSlot());
  });
  return h('div', {class: 'windows'}, rows,
    button('Add a window', () => { list.push({start: today(), end: today()}); state.rerender(); }));
}

function declineSection(rule, p) {
  if (!isObject(rule.decline)) rule.decline = {};
  const d = rule.decline;
  const dp = p + '/decline';
  const entry = state.vocab.slugs.find(s => s.slug === d.slug);
  const kinds = [...new Set([...(entry ? entry.suggests : []), ...(Array.isArray(d.suggest) ? d.suggest : [])])];
  return h('fieldset', {class: 'decline', 'data-pointer': dp},
    h('legend', {}, 'Decline: what the buyer is told ', h('span', {class: 'public-tag'}, 'public')),
    errSlot(),
    h('div', {class: 'row'},
      selectField({label: 'Slug', pointer: dp + '/slug', value: d.slug,
        options: state.vocab.slugs.map(s => ({value: s.slug, label: s.slug})),
        hint: entry ? entry.reason + (entry.fixable ? ' Fixable.' : ' Final: carries no suggestions.') : '',
        onChange: v => {
          d.slug = v;
          const e = state.vocab.slugs.find(s => s.slug === v);
          if (Array.isArray(d.suggest)) {
            d.suggest = d.suggest.filter(k => e && e.suggests.includes(k));
            if (!d.suggest.length) delete d.suggest;
          }
          state.rerender();
        }}),
      selectField({label: 'Disclosure', pointer: dp + '/disclosure', value: d.disclosure,
        options: state.vocab.disclosure_levels.map(l => ({value: l, label: l})),
        hint: DISCLOSURE_HELP[d.disclosure] || '',
        onChange: v => { d.disclosure = v; state.rerender(); }})),
    kinds.length
      ? enumField({label: 'Suggestions it may offer', pointer: dp + '/suggest', options: kinds, value: d.suggest,
        onChange: vals => { if (vals.length) d.suggest = vals; else delete d.suggest; }})
      : h('p', {class: 'hint'}, 'This slug carries no suggestions: the decline is final.'));
}

function move(i, delta) {
  const j = i + delta;
  if (j < 0 || j >= state.doc.rules.length) return;
  [state.doc.rules[i], state.doc.rules[j]] = [state.doc.rules[j], state.doc.rules[i]];
  state.rerender();
}

export function addRule() {
  if (!Array.isArray(state.doc.rules)) state.doc.rules = [];
  state.doc.rules.push({id: '', name: '', when: {keywords: []}, decline: {slug: 'commercially_declined', disclosure: 'category'}});
  state.rerender();
  const last = $('rule-' + (state.doc.rules.length - 1));
  if (last) {
    last.scrollIntoView({block: 'start'});
    last.querySelector('input')?.focus();
  }
}
