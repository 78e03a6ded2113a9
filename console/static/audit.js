// The audit trail: admin actions, newest first, filtered by token or
// action, and whether the trail's hash chain verifies.
import {$, h, api, page, problemText, fmtTime, badge, fill, vocabulary} from './console.js';

await page();
const vocab = await vocabulary();
$('a-action').append(...vocab.audit_actions.map(a => h('option', {value: a}, a)));

const params = new URLSearchParams(location.search);
if (params.get('token')) $('a-token').value = params.get('token');

let before = 0;

async function verify() {
  const box = $('verify');
  const r = await api('GET', '/audit/verify');
  box.classList.remove('ok', 'broken');
  if (!r.ok) {
    fill(box, 'Could not verify the audit trail: ' + problemText(r.problem));
    return;
  }
  const v = r.data;
  if (v.ok) {
    box.classList.add('ok');
    fill(box, h('strong', {}, 'Audit trail verified'), ': the hash chain is intact over all ' + v.checked + ' entries. No entry was changed, removed or reordered.');
  } else {
    box.classList.add('broken');
    fill(box, h('strong', {}, 'Audit trail broken'), ' at entry ' + (v.first_break?.sequence ?? '?') + ': ' +
      (v.first_break?.reason || 'unknown') + ' (' + v.checked + ' of ' + v.total + ' checked).');
  }
}

function query() {
  const q = new URLSearchParams();
  const token = $('a-token').value.trim();
  if (token) q.set('token', token);
  if ($('a-action').value) q.set('action', $('a-action').value);
  q.set('limit', '50');
  if (before) q.set('before', String(before));
  return q.toString();
}

function detail(d) {
  const keys = Object.keys(d || {}).sort();
  if (!keys.length) return '';
  return h('dl', {class: 'detail'}, keys.map(k => [h('dt', {}, k), h('dd', {}, d[k])]));
}

async function entries(append) {
  $('filter-error').textContent = '';
  const r = await api('GET', '/audit?' + query());
  const body = $('audit').querySelector('tbody');
  if (!r.ok) {
    const errs = r.problem?.errors || [];
    $('filter-error').textContent = errs.length ? errs.map(e => e.detail).join(' ') : problemText(r.problem);
    return;
  }
  const rows = r.data.entries.map(e => h('tr', {'data-sequence': e.sequence, 'data-action': e.action},
    h('td', {}, fmtTime(e.time)),
    h('td', {}, String(e.sequence)),
    h('td', {}, badge(e.action, 'action')),
    h('td', {}, h('code', {}, e.target)),
    h('td', {}, e.actor),
    h('td', {}, e.token_id ? h('code', {}, e.token_id) : '—'),
    h('td', {}, e.address),
    h('td', {}, detail(e.detail))));
  if (append) body.append(...rows);
  else fill(body, rows.length ? rows : h('tr', {}, h('td', {colspan: 8, class: 'hint'}, 'No entries match.')));
  before = r.data.next_before || 0;
  $('older').hidden = !before;
}

$('filters').addEventListener('submit', ev => {
  ev.preventDefault();
  before = 0;
  entries(false);
});
$('filters').addEventListener('reset', () => {
  before = 0;
  setTimeout(() => entries(false));
});
$('older').addEventListener('click', () => entries(true));

await Promise.all([verify(), entries(false)]);
document.body.dataset.loaded = 'true';
