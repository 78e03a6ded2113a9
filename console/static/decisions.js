// The decision ledger: a filterable table, server-rendered SVG charts of
// the stats, and the chain's verification status.
import {$, h, api, page, message, problemText, fmtTime, badge, vocabulary, fill, saveBlob} from './console.js';

await page();
const vocab = await vocabulary();

let before = 0;
const blobURLs = new Map();

$('f-slug').append(...vocab.slugs.map(s => h('option', {value: s.slug}, s.slug)));

async function verify() {
  const box = $('verify');
  const r = await api('GET', '/ledger/verify');
  box.classList.remove('ok', 'broken');
  if (!r.ok) {
    fill(box, 'Could not verify the ledger: ' + problemText(r.problem));
    return;
  }
  const v = r.data;
  if (v.ok && v.from > 1) {
    // The store keeps only a recent window of the chain (the in-memory
    // store): say which part was checked.
    box.classList.add('ok');
    fill(box, h('strong', {}, 'Ledger verified'), ': the hash chain is intact over decisions ' + v.from + ' to ' +
      (v.from + v.checked - 1) + ', the ' + v.checked + ' this store keeps. No kept entry was changed, removed or reordered.');
  } else if (v.ok) {
    box.classList.add('ok');
    fill(box, h('strong', {}, 'Ledger verified'), ': the hash chain is intact over all ' + v.checked + ' of ' + v.total +
      ' decisions. No entry was changed, removed or reordered.');
  } else {
    box.classList.add('broken');
    fill(box, h('strong', {}, 'Ledger chain broken'), ' at decision ' + (v.first_break?.sequence ?? '?') + ': ' +
      (v.first_break?.reason || 'unknown') + ' (' + v.checked + ' of ' + v.total + ' checked).');
  }
}

// Charts are SVG documents from the admin API. They need the bearer
// token, so they are fetched and shown from blob: URLs in <img>, where
// an SVG can run nothing.
async function chart(name, img) {
  const r = await api('GET', '/charts/' + name + '.svg?days=' + encodeURIComponent($('days').value), {blob: true});
  if (!r.ok) {
    img.alt = 'Chart unavailable: ' + problemText(r.problem);
    return;
  }
  const old = blobURLs.get(name);
  const url = URL.createObjectURL(r.blob);
  blobURLs.set(name, url);
  img.src = url;
  if (old) URL.revokeObjectURL(old);
}

async function charts() {
  await Promise.all([
    chart('declines', $('chart-declines')),
    chart('arms', $('chart-arms')),
    chart('returns', $('chart-returns')),
    costing(),
  ]);
}

async function costing() {
  const r = await api('GET', '/decisions/stats?days=' + encodeURIComponent($('days').value));
  const body = $('costing').querySelector('tbody');
  if (!r.ok) {
    fill(body, h('tr', {}, h('td', {colspan: 4}, problemText(r.problem))));
    return;
  }
  const st = r.data;
  const rows = vocab.slugs.filter(s => st.slugs[s.slug]).sort((a, b) => st.slugs[b.slug] - st.slugs[a.slug]);
  fill(body, ...(rows.length ? rows.map(s => h('tr', {},
    h('td', {}, h('code', {}, s.slug)), h('td', {}, String(st.slugs[s.slug])),
    h('td', {}, s.fixable ? 'yes' : 'no (final)'),
    h('td', {}, s.fixable ? String(st.returns_after_fixable_decline.converted_by_slug[s.slug] || 0) : '—')))
    : [h('tr', {}, h('td', {colspan: 4, class: 'hint'}, 'No declines in this period.'))]));
}

function rfc3339(local) {
  if (!local) return '';
  // datetime-local has no zone; the labels say UTC.
  const s = local.length === 16 ? local + ':00' : local;
  return s + 'Z';
}

function query() {
  const q = new URLSearchParams();
  const add = (k, v) => { if (v) q.set(k, v); };
  add('arm', $('f-arm').value);
  add('slug', $('f-slug').value);
  add('account', $('f-account').value.trim());
  add('since', rfc3339($('f-since').value));
  add('until', rfc3339($('f-until').value));
  q.set('limit', '50');
  if (before) q.set('before', String(before));
  return q.toString();
}

async function decisions(append) {
  $('filter-error').textContent = '';
  const r = await api('GET', '/decisions?' + query());
  const body = $('decisions').querySelector('tbody');
  if (!r.ok) {
    const errs = r.problem?.errors || [];
    $('filter-error').textContent = errs.length ? errs.map(e => e.detail).join(' ') : problemText(r.problem);
    return;
  }
  const rows = r.data.decisions.map(d => h('tr', {class: 'arm-' + d.arm, 'data-sequence': d.sequence},
    h('td', {}, fmtTime(d.time)),
    h('td', {}, String(d.sequence)),
    h('td', {}, h('code', {}, d.task || 'get_products'), ' ', badge(d.arm)),
    h('td', {}, d.slug ? h('code', {}, d.slug) : ''),
    h('td', {class: 'account'}, d.account || ''),
    h('td', {class: 'principal'}, d.principal || ''),
    h('td', {}, (d.rule_ids || []).map(id => h('code', {class: 'rule-id'}, id))),
    h('td', {}, d.rulebook_version ? 'v' + d.rulebook_version : ''),
    h('td', {}, d.forced ? badge('forced', 'muted') : null, d.sandbox ? badge('sandbox', 'muted') : null)));
  if (!append) body.replaceChildren();
  body.append(...rows);
  if (!append && !rows.length) body.append(h('tr', {}, h('td', {colspan: 9, class: 'hint', id: 'no-decisions'}, 'No decisions match.')));
  before = r.data.next_before || 0;
  $('older').hidden = !before;
}

$('filters').addEventListener('submit', ev => {
  ev.preventDefault();
  before = 0;
  decisions(false);
});
$('filters').addEventListener('reset', () => {
  setTimeout(() => {
    before = 0;
    decisions(false);
  });
});
$('older').addEventListener('click', () => decisions(true));

// download fetches the export of the filtered ledger with the token and
// saves it from a blob: URL.
async function download(format) {
  const q = new URLSearchParams(query());
  q.delete('limit');
  q.delete('before');
  q.set('format', format);
  const r = await api('GET', '/decisions/export?' + q.toString(), {blob: true});
  if (!r.ok) {
    $('filter-error').textContent = problemText(r.problem);
    return;
  }
  saveBlob(r.blob, 'decisions.' + format);
}
$('export-csv').addEventListener('click', () => download('csv'));
$('export-jsonl').addEventListener('click', () => download('jsonl'));
$('days').addEventListener('change', charts);

await Promise.all([verify(), charts(), decisions(false)]);
document.body.dataset.loaded = 'true';
