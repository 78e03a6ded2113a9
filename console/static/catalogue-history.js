// Catalogue history: every catalogue version (each product saved or
// deleted, each import, each rollback), the products that differ between
// any two with the fields that changed, and rollback, which saves the
// catalogue as it was as the newest version.
import {$, h, api, problemText, fmtTime, badge, fill, ask, rollBack} from './console.js';

let versions = [];
let current = 0;
let from = 0;
let to = 0;
let before = 0;
// diffSeq discards a diff that arrives after a newer one was asked for.
let diffSeq = 0;

function say(kind, text, ...extra) {
  const box = $('cat-messages');
  box.replaceChildren();
  if (text) box.append(h('div', {class: 'msg msg-' + kind, role: kind === 'error' ? 'alert' : 'status'}, h('span', {}, text), ...extra));
}

async function load(more = false) {
  const r = await api('GET', '/catalogue/versions?limit=50' + (more && before ? '&before=' + before : ''));
  if (!r.ok) {
    say('error', 'Could not load the catalogue history: ' + problemText(r.problem));
    return;
  }
  versions = more ? versions.concat(r.data.versions) : r.data.versions;
  current = r.data.current;
  before = r.data.next_before || 0;
  $('cat-older').hidden = !before;
  if (!versions.some(v => v.version === to)) to = current;
  if (!versions.some(v => v.version === from) || from === to) from = versions.find(v => v.version < to)?.version || to;
  renderTable();
  await renderDiff();
}

function radio(name, v, checked) {
  const input = h('input', {type: 'radio', name: 'cat-' + name, value: v.version, checked,
    'aria-label': (name === 'from' ? 'Compare from catalogue version ' : 'Compare to catalogue version ') + v.version});
  input.addEventListener('change', () => {
    if (name === 'from') from = v.version; else to = v.version;
    renderDiff();
  });
  return input;
}

function renderTable() {
  const body = $('cat-versions').querySelector('tbody');
  if (!versions.length) {
    fill(body, h('tr', {}, h('td', {colspan: 8, class: 'hint'}, 'The catalogue has not been changed yet.')));
    return;
  }
  fill(body, ...versions.map(v => h('tr', {id: 'cat-version-' + v.version, class: v.version === current ? 'current' : ''},
    h('td', {}, radio('from', v, v.version === from)),
    h('td', {}, radio('to', v, v.version === to)),
    h('td', {}, h('strong', {}, String(v.version)), v.version === current ? [' ', badge('in force', 'current')] : null),
    h('td', {}, fmtTime(v.created_at)),
    h('td', {}, v.author || '(the storefront)'),
    h('td', {class: 'note'}, v.note || ''),
    h('td', {}, v.products_put + ' saved, ' + v.products_deleted + ' deleted'),
    h('td', {}, v.version === current ? null : h('button', {type: 'button', class: 'cat-rollback', 'data-version': v.version,
      onclick: () => confirmRollback(v.version)}, 'Roll back to this version')))));
}

function show(v) {
  if (v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

async function renderDiff() {
  const seq = ++diffSeq;
  const box = $('cat-diff');
  $('cat-diff-title').textContent = from && to ? 'Products changed from catalogue version ' + from + ' to version ' + to : 'Changes';
  if (!from || !to || from === to) {
    fill(box, h('p', {class: 'hint'}, 'Pick two different versions.'));
    return;
  }
  const r = await api('GET', '/catalogue/diff?from=' + encodeURIComponent(from) + '&to=' + encodeURIComponent(to));
  if (seq !== diffSeq) return;
  if (!r.ok) {
    fill(box, h('p', {class: 'warn-text'}, problemText(r.problem)));
    return;
  }
  const changes = r.data.changes || [];
  if (!changes.length) {
    fill(box, h('p', {class: 'hint', id: 'cat-no-changes'}, 'The two versions hold the same products.'));
    return;
  }
  const words = {add: 'added', remove: 'removed', change: 'changed'};
  const ops = {add: 'op-add', remove: 'op-remove', change: 'op-replace'};
  fill(box,
    r.data.total > changes.length ? h('p', {class: 'hint'}, 'The first ' + changes.length + ' of ' + r.data.total + ' products that differ.') : null,
    h('div', {class: 'scroll'}, h('table', {class: 'data', id: 'cat-changes', 'data-from': from, 'data-to': to},
      h('thead', {}, h('tr', {}, h('th', {}, 'Product'), h('th', {}, 'Change'), h('th', {}, 'Field'), h('th', {}, 'Version ' + from), h('th', {}, 'Version ' + to))),
      h('tbody', {}, changes.flatMap(c => {
        const head = [h('td', {}, h('code', {}, c.product_id)), h('td', {}, badge(words[c.op] || c.op, ops[c.op]),
          c.internal_only ? [' ', h('span', {class: 'internal-tag'}, 'internal only')] : null)];
        if (c.op !== 'change') return [h('tr', {}, head, h('td', {colspan: 3}, ''))];
        return c.changes.map((f, i) => h('tr', {}, i === 0 ? head : [h('td', {}), h('td', {})],
          h('td', {}, h('code', {}, f.path)),
          h('td', {}, h('code', {class: 'from'}, show(f.from))),
          h('td', {}, h('code', {class: 'to'}, show(f.to)))));
      })))));
}

function confirmRollback(version) {
  ask($('cat-confirm'), 'Roll the catalogue back to version ' + version + '? Every product changed since goes back to how it was then, ' +
    'saved as catalogue version ' + (current + 1) + '. Buyers see it from their next call.',
  'Roll back to version ' + version, 'cat-confirm-rollback', () => rollback(version));
}

async function rollback(version) {
  const since = current;
  const saved = await rollBack('/catalogue/rollback', version, since, {say, reload: load,
    staleText: (cur, was) => 'the catalogue changed to version ' + cur + ' since you loaded version ' + was + '; reload to see the changes'});
  if (!saved) return;
  from = since;
  to = saved.version;
  say('ok', 'Rolled back: catalogue version ' + saved.version + ' holds the products as they were at version ' + version + '.');
  await load();
}

$('cat-older').addEventListener('click', () => load(true));
await load();
document.body.dataset.catalogueLoaded = 'true';
