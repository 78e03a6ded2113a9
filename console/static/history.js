// Rulebook history: the versions, a diff between any two, and rollback.
import {$, h, api, page, message, problemText, fmtTime, badge, fill, ask, rollBack} from './console.js';

await page();

let versions = [];
let current = 0;
let from = 0;
let to = 0;
// diffSeq discards a diff that arrives after a newer one was asked for.
let diffSeq = 0;

async function load() {
  const r = await api('GET', '/rulebook/versions');
  if (!r.ok) {
    message('error', 'Could not load the history: ' + problemText(r.problem));
    return;
  }
  versions = r.data.versions;
  current = versions.find(v => v.current)?.version || 0;
  if (!versions.some(v => v.version === to)) to = current;
  if (!versions.some(v => v.version === from) || from === to) {
    from = versions.find(v => v.version < to)?.version || to;
  }
  renderTable();
  await renderDiff();
}

function radio(name, v, checked) {
  const input = h('input', {type: 'radio', name, value: v.version, checked,
    'aria-label': (name === 'from' ? 'Compare from version ' : 'Compare to version ') + v.version});
  input.addEventListener('change', () => {
    if (name === 'from') from = v.version; else to = v.version;
    renderDiff();
  });
  return input;
}

function renderTable() {
  const body = $('versions').querySelector('tbody');
  if (!versions.length) {
    fill(body, h('tr', {}, h('td', {colspan: 8, class: 'hint'}, 'No rulebook has been saved yet.')));
    return;
  }
  fill(body, ...versions.map(v => h('tr', {id: 'version-' + v.version, class: v.current ? 'current' : ''},
    h('td', {}, radio('from', v, v.version === from)),
    h('td', {}, radio('to', v, v.version === to)),
    h('td', {}, h('strong', {}, String(v.version)), v.current ? [' ', badge('in force', 'current')] : null),
    h('td', {}, fmtTime(v.created_at)),
    h('td', {}, v.author),
    h('td', {class: 'note'}, v.note || ''),
    h('td', {}, String(v.rules)),
    h('td', {}, v.current ? null : h('button', {type: 'button', class: 'rollback', 'data-version': v.version,
      onclick: () => confirmRollback(v.version)}, 'Roll back to this version')))));
}

function show(v) {
  if (v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

async function renderDiff() {
  const seq = ++diffSeq;
  const box = $('diff');
  $('diff-title').textContent = from && to ? 'Changes from version ' + from + ' to version ' + to : 'Changes';
  if (!from || !to) {
    fill(box, h('p', {class: 'hint'}, 'Pick two versions to compare.'));
    return;
  }
  const r = await api('GET', '/rulebook/diff?from=' + encodeURIComponent(from) + '&to=' + encodeURIComponent(to));
  if (seq !== diffSeq) return;
  if (!r.ok) {
    fill(box, h('p', {class: 'warn-text'}, problemText(r.problem)));
    return;
  }
  const changes = r.data.changes || [];
  if (!changes.length) {
    fill(box, h('p', {class: 'hint', id: 'no-changes'}, from === to ? 'Pick two different versions.' : 'The two versions are the same.'));
    return;
  }
  const words = {add: 'added', remove: 'removed', replace: 'changed', move: 'reordered'};
  fill(box, h('div', {class: 'scroll'}, h('table', {class: 'data', id: 'changes'},
    h('thead', {}, h('tr', {}, h('th', {}, 'Change'), h('th', {}, 'Where'), h('th', {}, 'Version ' + from), h('th', {}, 'Version ' + to))),
    h('tbody', {}, changes.map(c => h('tr', {},
      h('td', {}, badge(words[c.op] || c.op, 'op-' + c.op)),
      h('td', {}, h('code', {}, c.path)),
      h('td', {}, h('code', {class: 'from'}, show(c.from))),
      h('td', {}, h('code', {class: 'to'}, show(c.to)))))))));
}

function confirmRollback(version) {
  ask($('confirm'), 'Roll back to version ' + version + '? The rulebook in force becomes a copy of version ' + version +
    ', saved as version ' + (current + 1) + '. Buyers get it from their next call.',
  'Roll back to version ' + version, 'confirm-rollback', () => rollback(version));
}

async function rollback(version) {
  const since = current;
  const saved = await rollBack('/rulebook/rollback', version, since, {say: message, reload: load,
    staleText: (cur, was) => 'someone else saved version ' + cur + ' since you loaded version ' + was + '; reload to see their changes'});
  if (!saved) return;
  from = since;
  to = saved.version;
  message('ok', 'Rolled back: version ' + saved.version + ' is a copy of version ' + version + ' and is now in force.');
  await load();
}

await load();
