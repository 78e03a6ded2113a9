// The order desk: buys waiting for approval (approve, or decline with a
// slug and the publisher's own words), the media buys with what they have
// delivered and their history, the decided orders, and the delivery CSV
// upload. Everything goes through the admin API; data only ever becomes
// text.
import {$, h, api, page, message, problemText, fmtTime, badge, vocabulary, fill} from './console.js';

await page();
const vocab = await vocabulary();

function money(amount, currency) {
  return Number(amount || 0).toLocaleString('en-US', {maximumFractionDigits: 2}) + ' ' + (currency || '');
}

function flight(b) {
  return fmtTime(b.start_time) + ' – ' + fmtTime(b.end_time);
}

function account(o) {
  const b = o.buy || o;
  return (b.brand_domain || '') + (b.account ? ' · ' + b.account : '');
}

function packages(b) {
  return h('ul', {class: 'plain'}, ...(b.packages || []).map(p =>
    h('li', {}, h('code', {}, p.product_id), ' · ', money(p.budget, b.currency))));
}

function declineForm(o) {
  const slugSel = h('select', {'aria-label': 'Decline reason category', name: 'slug'},
    ...vocab.slugs.map(s => h('option', {value: s.slug, selected: s.slug === 'commercially_declined'}, s.slug)));
  const reason = h('textarea', {rows: 2, name: 'reason', 'aria-label': 'Reason the buyer reads (optional)',
    placeholder: 'Optional: your words to the buyer'});
  const err = h('div', {class: 'field-error', role: 'alert'});
  const form = h('form', {class: 'decline', 'data-task': o.task_id},
    slugSel, reason, err,
    h('button', {type: 'submit', class: 'danger'}, 'Decline'));
  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    const row = form.closest('tr');
    if (row?.dataset.busy) return;
    fill(err);
    deciding(row, true);
    const r = await api('POST', '/orders/' + encodeURIComponent(o.task_id) + '/decline', {body: {slug: slugSel.value, reason: reason.value}});
    if (!r.ok) {
      deciding(row, false);
      const field = (r.problem?.errors || [])[0];
      fill(err, field ? field.detail : problemText(r.problem));
      message('error', 'Not declined: ' + problemText(r.problem));
      if (r.status === 409) await load();
      return;
    }
    message('ok', 'Declined order ' + o.task_id + '. The buyer was told: ' + r.data.reason);
    await load();
  });
  return form;
}

// deciding marks an order's row while its approval or decline is on its
// way, so that neither can be sent twice or both at once.
function deciding(row, busy) {
  if (!row) return;
  if (busy) row.dataset.busy = '1';
  else delete row.dataset.busy;
  for (const el of row.querySelectorAll('.decide button, .decide select, .decide textarea')) el.disabled = busy;
}

function queueRow(o) {
  const b = o.buy;
  const approve = h('button', {type: 'button', class: 'primary', 'data-task': o.task_id}, 'Approve');
  approve.addEventListener('click', async () => {
    const row = approve.closest('tr');
    if (row?.dataset.busy) return;
    deciding(row, true);
    const r = await api('POST', '/orders/' + encodeURIComponent(o.task_id) + '/approve', {body: {}});
    if (!r.ok) {
      deciding(row, false);
      message('error', 'Not approved: ' + problemText(r.problem));
      if (r.status === 409) await load();
      return;
    }
    message('ok', 'Approved order ' + o.task_id + ': media buy ' + r.data.media_buy_id + ' is ' + r.data.status + '.');
    await load();
  });
  return h('tr', {'data-task': o.task_id},
    h('td', {}, fmtTime(o.created_at)),
    h('td', {}, account(o)),
    h('td', {}, packages(b)),
    h('td', {class: 'num'}, money(o.total_budget, o.currency)),
    h('td', {}, flight(b)),
    h('td', {}, h('ul', {class: 'plain'}, ...(o.review || []).map(r => h('li', {}, r)))),
    h('td', {class: 'decide'}, approve, declineForm(o)));
}

function buyRow(b) {
  const d = b.delivered || {};
  const hist = h('details', {'data-buy': b.media_buy_id}, h('summary', {}, 'History'), h('ol', {class: 'history'}));
  hist.addEventListener('toggle', async () => {
    if (!hist.open || hist.dataset.loaded) return;
    const r = await api('GET', '/media-buys/' + encodeURIComponent(b.media_buy_id));
    const list = hist.querySelector('ol');
    if (!r.ok) {
      fill(list, h('li', {}, problemText(r.problem)));
      return;
    }
    hist.dataset.loaded = '1';
    fill(list, ...(r.data.history || []).map(e => h('li', {},
      fmtTime(e.timestamp), ' · r', String(e.revision), ' · ', h('strong', {}, e.action),
      e.summary ? ' — ' + e.summary : '', e.actor ? ' (' + e.actor + ')' : '')));
  });
  return h('tr', {'data-buy': b.media_buy_id},
    h('td', {}, h('code', {}, b.media_buy_id)),
    h('td', {}, badge(b.status, b.status)),
    h('td', {}, account(b)),
    h('td', {class: 'num'}, money(b.total_budget, b.currency)),
    h('td', {class: 'delivered'}, Number(d.impressions || 0).toLocaleString('en-US') + ' impressions · ' + money(d.spend, b.currency)),
    h('td', {}, flight(b)),
    h('td', {}, hist));
}

function decidedRow(o) {
  return h('tr', {'data-task': o.task_id},
    h('td', {}, fmtTime(o.decided_at)),
    h('td', {}, h('code', {}, o.task_id), ' · ', account(o)),
    h('td', {}, badge(o.status, o.status === 'approved' ? 'completed' : 'rejected')),
    h('td', {}, o.decided_by || ''),
    h('td', {}, o.status === 'approved' ? 'Media buy ' + (o.buy?.media_buy_id || '') + ' issued.' : [h('code', {}, o.slug || ''), ' ', o.reason || '']));
}

// The queue's rows by task id. A refresh keeps the row of an order still
// waiting, in place, so what the desk is typing into it, and a decision on
// its way, survive a refresh another decision started.
const queueRows = new Map();

// place makes rows the children of body, in order, removing the others but
// never moving a row that is already where it belongs (moving one would
// take the focus from a field being typed into).
function place(body, rows) {
  for (const child of [...body.children]) if (!rows.includes(child)) child.remove();
  let at = body.firstElementChild;
  for (const row of rows) {
    if (row === at) at = at.nextElementSibling;
    else body.insertBefore(row, at);
  }
}

function renderQueue(queue) {
  const qb = $('queue').querySelector('tbody');
  if (!queue.ok) {
    queueRows.clear();
    fill(qb, h('tr', {}, h('td', {colspan: 7}, problemText(queue.problem))));
    return;
  }
  const rows = queue.data.orders.map(o => queueRows.get(o.task_id) || queueRow(o));
  queueRows.clear();
  queue.data.orders.forEach((o, i) => queueRows.set(o.task_id, rows[i]));
  place(qb, rows.length ? rows : [h('tr', {}, h('td', {colspan: 7, class: 'hint'}, 'No order is waiting.'))]);
}

// refreshes counts the refreshes asked for: only the newest may draw, since
// one asked for earlier can answer later with what was true before.
let refreshes = 0;

async function load() {
  const mine = ++refreshes;
  const [queue, buys, decided] = await Promise.all([
    api('GET', '/orders?status=pending'),
    api('GET', '/media-buys'),
    api('GET', '/orders?status=all'),
  ]);
  if (mine !== refreshes) return;
  renderQueue(queue);
  const bb = $('buys').querySelector('tbody');
  if (!buys.ok) fill(bb, h('tr', {}, h('td', {colspan: 7}, problemText(buys.problem))));
  else fill(bb, ...(buys.data.media_buys.length ? buys.data.media_buys.map(buyRow)
    : [h('tr', {}, h('td', {colspan: 7, class: 'hint'}, 'No media buy yet.'))]));
  const db = $('decided').querySelector('tbody');
  const done = decided.ok ? decided.data.orders.filter(o => o.status !== 'pending') : [];
  if (!decided.ok) fill(db, h('tr', {}, h('td', {colspan: 5}, problemText(decided.problem))));
  else fill(db, ...(done.length ? done.map(decidedRow) : [h('tr', {}, h('td', {colspan: 5, class: 'hint'}, 'No order decided yet.'))]));
  document.body.dataset.loaded = String(mine);
}

$('upload').addEventListener('submit', async ev => {
  ev.preventDefault();
  const errs = $('upload-errors');
  fill(errs);
  const file = $('csv').files[0];
  if (!file) {
    fill(errs, h('li', {}, 'Choose a CSV file first.'));
    return;
  }
  const text = await file.text();
  const r = await api('POST', '/delivery', {body: text, headers: {'Content-Type': 'text/csv'}});
  if (!r.ok) {
    message('error', 'Nothing stored: ' + problemText(r.problem));
    fill(errs, ...(r.problem?.errors || []).map(e => h('li', {}, h('code', {}, e.pointer), ' ', e.detail)));
    return;
  }
  message('ok', 'Stored ' + r.data.stored + ' delivery rows.');
  $('upload').reset();
  await load();
});

await load();
