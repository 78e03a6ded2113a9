// Tokens: the publisher's admin and buyer tokens with their state, and
// creating, rotating and revoking them. Secrets are shown once, in a
// read-only field, and never kept by the page.
import {$, h, api, page, message, problemText, fmtTime, badge, fill, getSession, setSession} from './console.js';

const session = await page();

let list = [];

function scope(t) {
  if (!t.buyer) return 'admin API of ' + t.publisher;
  let s = 'buyer ' + t.buyer.id + ' for ' + t.buyer.operator;
  if (t.buyer.accounts && t.buyer.accounts.length) s += ' (accounts ' + t.buyer.accounts.join(', ') + ')';
  return s;
}

function when(iso, none) {
  return iso ? fmtTime(iso) : none;
}

async function load() {
  const r = await api('GET', '/tokens');
  if (!r.ok) {
    message('error', 'Could not load the tokens: ' + problemText(r.problem));
    return;
  }
  list = r.data.tokens;
  render();
}

function render() {
  const body = $('tokens').querySelector('tbody');
  // Newest first, and live tokens before refused ones.
  const rank = {active: 0, rotated: 1, expired: 2, revoked: 3};
  const rows = [...list].sort((a, b) => (rank[a.status] - rank[b.status]) || b.created_at.localeCompare(a.created_at));
  fill(body, ...rows.map(t => {
    const live = t.status === 'active' || t.status === 'rotated';
    const mine = t.id === session.tokenId;
    return h('tr', {id: 'token-' + t.id, 'data-status': t.status},
      h('td', {}, h('strong', {}, t.name), mine ? [' ', badge('this session', 'muted')] : null,
        h('div', {class: 'hint'}, h('code', {}, t.id))),
      h('td', {class: 'kind'}, t.kind),
      h('td', {}, t.prefix ? h('code', {}, t.prefix + '…') : h('span', {class: 'hint'}, 'not kept')),
      h('td', {class: 'scope'}, scope(t)),
      h('td', {}, fmtTime(t.created_at)),
      h('td', {class: 'last-used'}, when(t.last_used_at, 'never')),
      h('td', {}, when(t.expires_at, 'never')),
      h('td', {}, badge(t.status), t.replaced_by ? h('div', {class: 'hint'}, 'replaced by ', h('code', {}, t.replaced_by)) : null),
      h('td', {class: 'actions'},
        live && !t.replaced_by ? h('button', {type: 'button', class: 'rotate', onclick: () => confirmRotate(t)}, 'Rotate') : null,
        t.status !== 'revoked' ? h('button', {type: 'button', class: 'danger revoke', onclick: () => confirmRevoke(t)}, 'Revoke') : null,
        h('button', {type: 'button', class: 'link trail', onclick: () => location.assign('audit.html?token=' + encodeURIComponent(t.id))}, 'audit trail')));
  }));
}

function showSecret(secret) {
  $('secret-value').value = secret;
  $('new-secret').hidden = false;
  $('secret-value').focus();
  $('secret-value').select();
}

$('secret-done').addEventListener('click', () => {
  $('secret-value').value = '';
  $('new-secret').hidden = true;
});

function confirmRevoke(t) {
  const box = $('confirm');
  const mine = t.id === session.tokenId;
  fill(box,
    h('p', {}, 'Revoke ' + t.kind + ' token “' + t.name + '” (' + (t.prefix || t.id) + '…)? Every storefront refuses it from its next request. ' +
      (mine ? 'It is the token this session uses: you will be signed out.' : 'This cannot be undone.')),
    h('button', {type: 'button', class: 'primary danger', id: 'confirm-revoke', onclick: () => revoke(t)}, 'Revoke ' + t.name),
    h('button', {type: 'button', onclick: () => { box.hidden = true; }}, 'Cancel'));
  box.hidden = false;
  $('confirm-revoke').focus();
}

async function revoke(t) {
  $('confirm').hidden = true;
  const r = await api('POST', '/tokens/' + encodeURIComponent(t.id) + '/revoke');
  if (!r.ok) {
    message('error', 'Not revoked: ' + problemText(r.problem));
    return;
  }
  message('ok', 'Revoked “' + t.name + '”: it is refused from now on.');
  await load();
}

function confirmRotate(t) {
  const box = $('confirm');
  const overlap = h('select', {id: 'rotate-overlap', 'aria-label': 'Overlap'},
    h('option', {value: '0s'}, 'refuse the old token at once'),
    h('option', {value: '1h'}, 'keep the old token for 1 hour'),
    h('option', {value: '24h', selected: true}, 'keep the old token for 1 day'),
    h('option', {value: '168h'}, 'keep the old token for 7 days'));
  fill(box,
    h('p', {}, 'Rotate ' + t.kind + ' token “' + t.name + '”? A new token with the same scope is made and shown once; the old one keeps working for the overlap you choose, then is refused.'),
    overlap,
    h('button', {type: 'button', class: 'primary', id: 'confirm-rotate', onclick: () => rotate(t, overlap.value)}, 'Rotate ' + t.name),
    h('button', {type: 'button', onclick: () => { box.hidden = true; }}, 'Cancel'));
  box.hidden = false;
  $('confirm-rotate').focus();
}

async function rotate(t, overlap) {
  $('confirm').hidden = true;
  const r = await api('POST', '/tokens/' + encodeURIComponent(t.id) + '/rotate', {body: {overlap}});
  if (!r.ok) {
    message('error', 'Not rotated: ' + problemText(r.problem));
    return;
  }
  if (t.id === session.tokenId) {
    // Keep this session signed in with the successor.
    const s = getSession();
    setSession({...s, token: r.data.token, tokenId: r.data.record.id});
    session.token = r.data.token;
    session.tokenId = r.data.record.id;
  }
  showSecret(r.data.token);
  const until = r.data.replaced.status === 'revoked' ? 'is refused from now on' : 'works until ' + fmtTime(r.data.replaced.expires_at);
  message('ok', 'Rotated “' + t.name + '”: the old token ' + until + '.');
  await load();
}

function kindChanged() {
  const buyer = $('c-kind').value === 'buyer';
  for (const el of document.querySelectorAll('.buyer-only')) el.hidden = !buyer;
}
$('c-kind').addEventListener('change', kindChanged);
kindChanged();

function clearErrors() {
  for (const el of document.querySelectorAll('#create [data-pointer]')) {
    el.classList.remove('invalid');
    el.querySelector('.field-error').replaceChildren();
  }
}

$('create').addEventListener('submit', async ev => {
  ev.preventDefault();
  clearErrors();
  const kind = $('c-kind').value;
  const body = {kind, name: $('c-name').value.trim()};
  if ($('c-expires').value) body.expires_in = $('c-expires').value;
  if (kind === 'buyer') {
    const accounts = $('c-accounts').value.split(',').map(s => s.trim()).filter(Boolean);
    body.buyer = {id: $('c-buyer').value.trim(), operator: $('c-operator').value.trim()};
    if (accounts.length) body.buyer.accounts = accounts;
    // A buyer token is named after its buyer unless given a name.
    body.name ||= body.buyer.id;
  }
  $('create-button').disabled = true;
  const r = await api('POST', '/tokens', {body});
  $('create-button').disabled = false;
  if (!r.ok) {
    let shown = false;
    for (const e of r.problem?.errors || []) {
      const field = document.querySelector('#create [data-pointer="' + CSS.escape(e.pointer.replace(/\/\d+$/, '')) + '"]');
      if (field) {
        field.classList.add('invalid');
        field.querySelector('.field-error').append(h('span', {}, e.detail));
        shown = true;
      }
    }
    message('error', 'Not created: ' + (shown ? 'see the fields marked below.' : problemText(r.problem)));
    return;
  }
  $('create').reset();
  kindChanged();
  showSecret(r.data.token);
  message('ok', 'Created ' + kind + ' token “' + r.data.record.name + '”.');
  await load();
});

await load();
document.body.dataset.loaded = 'true';
