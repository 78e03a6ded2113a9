// One product as a form: what buyers see (names, description, channels,
// formats, pricing, properties, reporting), what only the catalogue uses
// to match briefs (markets, availability windows, keywords), and the
// internal reference, marked internal like a rule's confidential parts.
// The form edits the working document in place; every field carries the
// JSON pointer the admin API names in its errors.
import {h, ptr, fill} from './console.js';
import {
  isObject, numberOrRaw, errSlot, textField, numberField, listField, selectField, enumField, checkField, button,
} from './fields.js';

// state is the page's: {doc, vocab, isNew, domain, rerender(), changed()}.
let state;

export function bindProductForm(s) {
  state = s;
}

function opts(values, blank) {
  return [...(blank !== undefined ? [{value: '', label: blank}] : []), ...values.map(v => ({value: v, label: v}))];
}

function section(title, cls, ...children) {
  return h('fieldset', {class: cls || ''}, h('legend', {}, ...[title].flat()), ...children);
}

function rows(list, pointer, render, add, addLabel) {
  return h('div', {class: 'rows', 'data-pointer': pointer}, errSlot(),
    list.map((item, i) => render(item, i, pointer + ptr(i))),
    button(addLabel, () => { list.push(add()); state.rerender(); }));
}

function remove(list, i, label) {
  return button('Remove', () => { list.splice(i, 1); state.rerender(); }, {class: 'quiet', 'aria-label': label});
}

// renderProduct draws the whole form into el.
export function renderProduct(el) {
  const p = state.doc;
  const v = state.vocab;
  const set = (key, val, empty) => { if (empty(val)) delete p[key]; else p[key] = val; };
  fill(el,
    section('What buyers see', 'public',
      h('span', {class: 'public-tag'}, 'public'),
      h('div', {class: 'row'},
        state.isNew
          ? textField({label: 'Product id', pointer: '/product_id', value: p.product_id, onInput: x => { p.product_id = x; },
            hint: 'Permanent: the id buyers book by.'})
          : h('div', {class: 'field'}, h('span', {class: 'label'}, 'Product id'), h('code', {id: 'product-id'}, p.product_id)),
        textField({label: 'Name', pointer: '/name', value: p.name, cls: 'grow', onInput: x => { p.name = x; }})),
      textField({label: 'Description', pointer: '/description', value: p.description, multiline: true, onInput: x => { p.description = x; }}),
      enumField({label: 'Channels', pointer: '/channels', options: v.channels, value: p.channels, onChange: x => { p.channels = x; }}),
      h('div', {class: 'row'},
        selectField({label: 'Delivery', pointer: '/delivery_type', value: p.delivery_type, options: opts(v.delivery_types),
          onChange: x => { p.delivery_type = x; state.rerender(); }}),
        selectField({label: 'Exclusivity', pointer: '/exclusivity', value: p.exclusivity || '', options: opts(v.product.exclusivities, '(not stated)'),
          onChange: x => { set('exclusivity', x, s => !s); state.rerender(); }}))),
    section('Formats', '', formats(p)),
    section('Pricing', '', pricing(p)),
    section('Publisher properties', '', properties(p)),
    section('Reporting', '', reporting(p)),
    h('details', {class: 'scope', open: Boolean(p.video_placement_types?.length || p.audio_distribution_types?.length)},
      h('summary', {}, 'Video placements and audio distribution'),
      enumField({label: 'Video placement types', pointer: '/video_placement_types', options: v.product.video_placement_types,
        value: p.video_placement_types, onChange: x => set('video_placement_types', x, a => !a.length)}),
      enumField({label: 'Audio distribution types', pointer: '/audio_distribution_types', options: v.product.audio_distribution_types,
        value: p.audio_distribution_types, onChange: x => set('audio_distribution_types', x, a => !a.length)})),
    section(['Matching ', h('span', {class: 'hint'}, '(used to match briefs; not sent to buyers as written)')], 'matching',
      listField({label: 'Markets', pointer: '/countries', value: p.countries, placeholder: 'US, CA, GB',
        hint: 'ISO country codes, comma separated.', onInput: x => { p.countries = x.map(c => c.toUpperCase()); }}),
      h('div', {class: 'field', 'data-pointer': '/availability'}, h('span', {class: 'label'}, 'Availability windows'),
        h('small', {class: 'hint'}, 'No window: always bookable.'), windows(p)),
      listField({label: 'Keywords', pointer: '/keywords', value: p.keywords, placeholder: 'coffee, breakfast',
        hint: 'Extra words brief ranking matches on.', onInput: x => set('keywords', x, a => !a.length)})),
    h('fieldset', {class: 'internal'},
      h('legend', {}, h('span', {class: 'internal-tag'}, 'Internal'), ' Confidential: never shown to buyers'),
      textField({label: 'Internal reference', pointer: '/internal_ref', value: p.internal_ref,
        hint: 'Your ad server’s id for it. It joins the screen’s deny-list: no answer can name it.',
        onInput: x => set('internal_ref', x, s => !s)})));
}

function formats(p) {
  if (!Array.isArray(p.format_options)) p.format_options = [];
  return rows(p.format_options, '/format_options', (f, i, fp) => {
    const params = typeof f.params === 'string' ? f.params : JSON.stringify(f.params ?? {}, null, 1);
    return h('div', {class: 'item-row', 'data-pointer': fp},
      textField({label: 'Format option id', pointer: fp + '/format_option_id', value: f.format_option_id,
        onInput: x => { if (x) f.format_option_id = x; else delete f.format_option_id; }}),
      selectField({label: 'Format kind', pointer: fp + '/format_kind', value: f.format_kind, options: opts(state.vocab.format_kinds),
        onChange: x => { f.format_kind = x; state.rerender(); }}),
      textField({label: 'Parameters (JSON)', pointer: fp + '/params', value: params, multiline: true, cls: 'grow',
        // Kept as typed while it is not JSON, so the API names the field.
        onInput: x => { try { f.params = JSON.parse(x); } catch { f.params = x; } }}),
      remove(p.format_options, i, 'Remove format option ' + (i + 1)), errSlot());
  }, () => ({format_kind: 'image', params: {}}), 'Add a format');
}

function pricing(p) {
  if (!Array.isArray(p.pricing_options)) p.pricing_options = [];
  return rows(p.pricing_options, '/pricing_options', (o, i, op) => {
    const kind = 'floor_price' in o && !('fixed_price' in o) ? 'floor_price' : 'fixed_price';
    return h('div', {class: 'item-row', 'data-pointer': op},
      textField({label: 'Pricing option id', pointer: op + '/pricing_option_id', value: o.pricing_option_id, onInput: x => { o.pricing_option_id = x; }}),
      textField({label: 'Currency', pointer: op + '/currency', value: o.currency, size: 5, cls: 'narrow', onInput: x => { o.currency = x.toUpperCase(); }}),
      selectField({label: 'CPM', pointer: op + '/pricing_model', value: kind, options: [{value: 'fixed_price', label: 'fixed'}, {value: 'floor_price', label: 'auction floor'}],
        onChange: x => { const amount = o[kind]; delete o.fixed_price; delete o.floor_price; o[x] = amount ?? 0; state.rerender(); }}),
      numberField({label: 'Price', pointer: op + '/' + kind, value: o[kind], onInput: x => { o[kind] = numberOrRaw(x); }}),
      numberField({label: 'Minimum spend per package', pointer: op + '/min_spend_per_package', value: o.min_spend_per_package,
        onInput: x => { const n = numberOrRaw(x); if (n === '') delete o.min_spend_per_package; else o.min_spend_per_package = n; }}),
      remove(p.pricing_options, i, 'Remove pricing option ' + (i + 1)), errSlot());
  }, () => ({pricing_option_id: 'cpm_usd_' + (p.pricing_options.length + 1), pricing_model: 'cpm', currency: 'USD', fixed_price: 10}), 'Add a pricing option');
}

function properties(p) {
  if (!Array.isArray(p.publisher_properties)) p.publisher_properties = [];
  return rows(p.publisher_properties, '/publisher_properties', (pp, i, pr) => {
    const listKey = pp.selection_type === 'by_tag' ? 'property_tags' : 'property_ids';
    return h('div', {class: 'item-row', 'data-pointer': pr},
      textField({label: 'Publisher domain', pointer: pr + '/publisher_domain', value: pp.publisher_domain, onInput: x => { pp.publisher_domain = x; }}),
      selectField({label: 'Selection', pointer: pr + '/selection_type', value: pp.selection_type, options: opts(state.vocab.product.selection_types),
        onChange: x => { pp.selection_type = x; delete pp.property_ids; delete pp.property_tags; state.rerender(); }}),
      pp.selection_type === 'all' ? null : listField({label: listKey === 'property_tags' ? 'Property tags' : 'Property ids', pointer: pr + '/' + listKey,
        value: pp[listKey], onInput: x => { pp[listKey] = x; }}),
      remove(p.publisher_properties, i, 'Remove publisher property ' + (i + 1)), errSlot());
  }, () => ({publisher_domain: state.domain || '', selection_type: 'all'}), 'Add a publisher property');
}

function reporting(p) {
  if (!isObject(p.reporting_capabilities)) p.reporting_capabilities = {};
  const r = p.reporting_capabilities;
  const rp = '/reporting_capabilities';
  return h('div', {'data-pointer': rp}, errSlot(),
    enumField({label: 'Reporting frequencies', pointer: rp + '/available_reporting_frequencies', options: state.vocab.product.reporting_frequencies,
      value: r.available_reporting_frequencies, onChange: x => { r.available_reporting_frequencies = x; }}),
    h('div', {class: 'row'},
      textField({label: 'Time zone', pointer: rp + '/timezone', value: r.timezone, placeholder: 'UTC', onInput: x => { r.timezone = x; }}),
      numberField({label: 'Expected delay (minutes)', pointer: rp + '/expected_delay_minutes', value: r.expected_delay_minutes, step: 1,
        onInput: x => { r.expected_delay_minutes = numberOrRaw(x); }}),
      selectField({label: 'Date ranges', pointer: rp + '/date_range_support', value: r.date_range_support, options: opts(state.vocab.product.date_range_support),
        onChange: x => { r.date_range_support = x; state.rerender(); }})),
    checkField({label: 'Reports by webhook', pointer: rp + '/supports_webhooks', checked: r.supports_webhooks, onChange: x => { r.supports_webhooks = x; state.rerender(); }}),
    h('details', {class: 'scope'}, h('summary', {}, 'Metrics' + (r.available_metrics?.length ? ': ' + r.available_metrics.length : '')),
      enumField({label: 'Available metrics', pointer: rp + '/available_metrics', options: state.vocab.product.metrics,
        value: r.available_metrics, onChange: x => { r.available_metrics = x; }})));
}

function windows(p) {
  const list = Array.isArray(p.availability) ? p.availability : [];
  return h('div', {class: 'windows'},
    list.map((w, i) => {
      const wp = ptr('availability', i);
      const date = (key, label) => {
        const input = h('input', {type: 'date', name: wp + ptr(key), 'aria-label': label + ' of window ' + (i + 1)});
        input.value = w[key] || '';
        input.addEventListener('input', () => { w[key] = input.value; state.changed(); });
        return h('div', {class: 'field', 'data-pointer': wp + ptr(key)}, h('span', {class: 'label'}, label), input, errSlot());
      };
      return h('div', {class: 'window-row', 'data-pointer': wp}, date('start', 'From'), date('end', 'To (included)'),
        button('Remove', () => { list.splice(i, 1); if (!list.length) delete p.availability; state.rerender(); },
          {class: 'quiet', 'aria-label': 'Remove window ' + (i + 1)}), errSlot());
    }),
    button('Add a window', () => {
      const day = new Date().toISOString().slice(0, 10);
      p.availability = [...list, {start: day, end: day}];
      state.rerender();
    }));
}

// blankProduct is the starting point of a new product.
export function blankProduct(domain) {
  return {
    product_id: '', name: '', description: '', publisher_properties: [{publisher_domain: domain || '', selection_type: 'all'}],
    channels: [], format_options: [{format_kind: 'image', params: {}}], delivery_type: 'non_guaranteed',
    pricing_options: [{pricing_option_id: 'cpm_usd', pricing_model: 'cpm', currency: 'USD', fixed_price: 10}],
    reporting_capabilities: {available_reporting_frequencies: ['daily'], expected_delay_minutes: 240, timezone: 'UTC',
      supports_webhooks: false, available_metrics: ['impressions', 'spend'], date_range_support: 'date_range'},
    countries: [],
  };
}

