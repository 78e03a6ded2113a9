// The products page: the catalogue searched and filtered a page at a
// time, each product edited as a form (product-form.js) with the admin
// API's errors next to their fields, saved as a catalogue version with
// If-Match, deleted, or backtested against the briefs buyers really sent.
import {$, h, api, page, message, problemText, fmtTime, stable, clone, vocabulary, fill, ask, saveBlob} from './console.js';
import {onEdit, button} from './fields.js';
import {ErrorBoard, problemsOf} from './pointers.js';
import {bindProductForm, renderProduct, blankProduct} from './product-form.js';
import {setupBacktest} from './backtest.js';

await page();

const PAGE = 25;
const state = {
  vocab: await vocabulary(),
  domain: '',
  // The catalogue version the list and the editor were read at.
  version: 0,
  // loaded is the product as saved (null for a new one); doc the working copy.
  loaded: null,
  doc: null,
  isNew: false,
  rerender,
  changed,
};
const board = new ErrorBoard($('product-form'), $('errors-summary'), {documentName: '(the product)'});
bindProductForm(state);
onEdit(changed);

let offset = 0;
let total = 0;

function isDirty() {
  return state.doc !== null && stable(state.doc) !== stable(state.loaded);
}

function changed() {
  $('dirty').hidden = !isDirty();
}

function render() {
  renderProduct($('product-form'));
  board.reindex();
  board.show(board.errors);
  changed();
}

function rerender() {
  render();
}

function query() {
  const q = new URLSearchParams({limit: String(PAGE), offset: String(offset)});
  const add = (k, v) => { if (v) q.set(k, v); };
  add('q', $('q').value.trim());
  add('channel', $('f-channel').value);
  add('country', $('f-country').value.trim().toUpperCase());
  add('delivery_type', $('f-delivery').value);
  return q.toString();
}

function pricing(p) {
  return (p.pricing_options || []).map(o => {
    const price = o.fixed_price ?? o.floor_price;
    return (o.fixed_price !== undefined ? '' : 'floor ') + price + ' ' + o.currency + ' CPM' +
      (o.min_spend_per_package ? ', min ' + o.min_spend_per_package : '');
  }).join('; ');
}

async function list() {
  const r = await api('GET', '/products?' + query());
  const box = $('list-messages');
  box.replaceChildren();
  if (!r.ok) {
    box.append(h('div', {class: 'msg msg-error', role: 'alert'}, problemText(r.problem)));
    return;
  }
  state.version = r.data.catalogue_version;
  total = r.data.total;
  $('catalogue-status').textContent = 'Catalogue version ' + state.version;
  const body = $('product-list').querySelector('tbody');
  fill(body, ...(r.data.products.length ? r.data.products.map(p => h('tr', {'data-id': p.product_id},
    h('td', {}, button(p.name || p.product_id, () => open(p.product_id), {class: 'link open-product'}),
      h('div', {class: 'hint'}, p.product_id)),
    h('td', {}, (p.channels || []).join(', ')),
    h('td', {}, (p.countries || []).join(', ')),
    h('td', {}, pricing(p)),
    h('td', {}, p.internal_ref ? h('code', {}, p.internal_ref) : '')))
    : [h('tr', {}, h('td', {colspan: 5, class: 'hint', id: 'no-products'}, 'No product matches.'))]));
  $('page-status').textContent = total ? (offset + 1) + '–' + Math.min(offset + PAGE, total) + ' of ' + total : '';
  $('prev').disabled = offset === 0;
  $('next').disabled = offset + PAGE >= total;
  document.body.dataset.loaded = 'true';
}

function show(product, isNew) {
  state.loaded = isNew ? null : product;
  state.doc = clone(product);
  state.isNew = isNew;
  board.errors = [];
  $('editor-panel').hidden = false;
  $('editor-title').textContent = isNew ? 'New product' : product.name || product.product_id;
  $('delete').hidden = isNew;
  message('');
  render();
  $('editor-panel').scrollIntoView({block: 'start'});
}

async function open(id) {
  if (isDirty() && !confirm('Discard your unsaved edits to this product?')) return;
  const r = await api('GET', '/products/' + encodeURIComponent(id));
  if (!r.ok) {
    message('error', 'Could not open the product: ' + problemText(r.problem));
    return;
  }
  state.version = r.etag ?? state.version;
  show(r.data, false);
}

async function save() {
  const btn = $('save');
  btn.disabled = true;
  try {
    const id = state.doc.product_id;
    if (!id) {
      board.show([{pointer: '/product_id', detail: 'product_id is required'}]);
      message('error', 'Not saved: give the product an id.');
      return;
    }
    const since = state.version;
    const headers = {};
    const note = $('note').value.trim();
    if (note) {
      if (/[^\x20-\x7e\xa0-\xff]/.test(note)) {
        message('error', 'Not saved: the change note may use only Latin letters, digits and punctuation.');
        return;
      }
      headers['X-Change-Note'] = note;
    }
    const r = await api('PUT', '/products/' + encodeURIComponent(id), {body: state.doc, ifMatch: since, headers});
    if (r.ok) {
      state.version = r.data.catalogue_version;
      $('note').value = '';
      show(r.data.product, false);
      message('ok', 'Saved as catalogue version ' + r.data.catalogue_version + ' (' + fmtTime(r.data.version.created_at) +
        '). Buyers see it from their next call.');
      await list();
      return;
    }
    if (r.status === 412) {
      const cur = r.problem?.current_version;
      message('error', 'Not saved: the catalogue changed to version ' + cur + ' since you loaded version ' + since +
        '; reload the product to see the changes. Nothing was overwritten, and your edits are still on this page.',
      button('Reload the product (discards your edits)', () => { state.doc = null; open(id); list(); }, {id: 'reload-stale'}));
      return;
    }
    if (r.status === 422) {
      board.show(problemsOf(r.problem));
      message('error', 'Not saved: the product has problems, shown next to the fields they point to. Nothing was saved.');
      return;
    }
    message('error', 'Not saved: ' + problemText(r.problem));
  } finally {
    btn.disabled = false;
  }
}

function confirmDelete() {
  ask($('confirm'), 'Delete ' + state.loaded.product_id + '? Buyers stop seeing it from their next call. The deletion is a catalogue version: ' +
    'rolling back to an earlier version brings the product back.', 'Delete the product', 'confirm-delete', del);
}

async function del() {
  const id = state.loaded.product_id;
  const r = await api('DELETE', '/products/' + encodeURIComponent(id), {ifMatch: state.version});
  if (!r.ok) {
    message('error', 'Not deleted: ' + problemText(r.problem));
    return;
  }
  state.loaded = state.doc = null;
  $('editor-panel').hidden = true;
  await list();
  fill($('list-messages'), h('div', {class: 'msg msg-ok', role: 'status'}, 'Deleted ' + id + ' as catalogue version ' + r.data.catalogue_version + '.'));
}

// download fetches an export with the token and saves it from a blob: URL.
async function download(format) {
  const r = await api('GET', '/catalogue/export?format=' + format, {blob: true});
  if (!r.ok) {
    fill($('list-messages'), h('div', {class: 'msg msg-error', role: 'alert'}, problemText(r.problem)));
    return;
  }
  saveBlob(r.blob, 'catalogue.' + format);
}

$('f-channel').append(...state.vocab.channels.map(c => h('option', {value: c}, c)));
$('f-delivery').append(...state.vocab.delivery_types.map(d => h('option', {value: d}, d)));
$('search').addEventListener('submit', ev => {
  ev.preventDefault();
  offset = 0;
  list();
});
$('search').addEventListener('reset', () => setTimeout(() => { offset = 0; list(); }));
$('prev').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); list(); });
$('next').addEventListener('click', () => { offset += PAGE; list(); });
$('new-product').addEventListener('click', () => {
  if (isDirty() && !confirm('Discard your unsaved edits to this product?')) return;
  show(blankProduct(state.domain), true);
});
$('save').addEventListener('click', save);
$('discard').addEventListener('click', () => {
  if (state.isNew) show(blankProduct(state.domain), true);
  else show(state.loaded, false);
  message('info', 'Your edits were discarded.');
});
$('delete').addEventListener('click', confirmDelete);
$('close-editor').addEventListener('click', () => {
  if (isDirty() && !confirm('Discard your unsaved edits to this product?')) return;
  state.doc = state.loaded = null;
  $('editor-panel').hidden = true;
});
$('export-jsonl').addEventListener('click', () => download('jsonl'));
$('export-csv').addEventListener('click', () => download('csv'));
addEventListener('beforeunload', ev => {
  if (isDirty()) ev.preventDefault();
});
setupBacktest(state, () => (state.doc ? {catalogue: {put: [state.doc]}} : null));

const who = await api('GET', '');
if (who.ok) state.domain = who.data.domain;
await list();
