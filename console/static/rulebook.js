// The rulebook editor: every rule as a form (rulebook-form.js), a raw view
// of the document, validation errors next to the fields they point to
// (pointers.js), optimistic saves, a live preview of the draft and of any
// saved version (preview.js), and a backtest of the draft on the briefs
// buyers really sent (backtest.js). This module holds the editor's state
// and its saves.
import {$, api, page, message, problemText, fmtTime, stable, clone, vocabulary, h, fill} from './console.js';
import {onEdit, isObject, button} from './fields.js';
import {ErrorBoard, problemsOf} from './pointers.js';
import {bindForm, renderVoice, renderRules, addRule} from './rulebook-form.js';
import {setupPreview, schedulePreview} from './preview.js';
import {setupBacktest} from './backtest.js';

await page();

// state is shared with the form, preview and backtest modules. loaded is
// the version the edits are based on, as the API returned it; doc is the
// working copy the forms edit in place.
const state = {
  vocab: await vocabulary(),
  loaded: null,
  doc: null,
  view: 'form',
  rawBroken: null,
  isDirty,
  changed,
  rerender,
  showErrors: list => board.show(list),
};
const board = new ErrorBoard(document.querySelector('.editor'), $('errors-summary'), {
  where: pointer => {
    const rule = /^\/rules\/(\d+)(?:\/|$)/.exec(pointer);
    return rule ? ' (rule ' + (Number(rule[1]) + 1) + ')' : '';
  },
});
bindForm(state);
onEdit(changed);

function render() {
  if (state.view === 'form') {
    renderVoice();
    renderRules();
  }
  board.reindex();
  board.show(board.errors);
  updateStatus();
}

function rerender() {
  render();
  changed();
}

function isDirty() {
  if (!state.loaded) return false;
  if (state.view === 'raw' && state.rawBroken) return true;
  return stable(state.doc) !== stable(state.loaded.rulebook);
}

function updateStatus() {
  const l = state.loaded;
  $('version-status').textContent = l.version
    ? 'Version ' + l.version + ' · saved ' + fmtTime(l.created_at) + ' by ' + l.author + (l.note ? ' · “' + l.note + '”' : '')
    : 'No rulebook saved yet';
  $('dirty').hidden = !isDirty();
  $('raw-format').textContent = state.vocab.format;
}

function changed() {
  updateStatus();
  schedulePreview();
}

// edit replaces the working copy with doc (as loaded or saved).
function edit(doc) {
  state.doc = clone(doc);
  state.rawBroken = null;
  if (state.view === 'raw') $('raw').value = JSON.stringify(state.doc, null, 2);
  board.errors = [];
}

async function load() {
  const r = await api('GET', '/rulebook');
  if (r.ok) {
    state.loaded = r.data;
  } else if (r.status === 404) {
    state.loaded = {version: 0, rulebook: {format: state.vocab.format, voice: {}, rules: []}};
    message('warn', 'This publisher has no rulebook yet. Until one is saved, buyers get the error arm.');
  } else {
    message('error', 'Could not load the rulebook: ' + problemText(r.problem));
    return;
  }
  edit(state.loaded.rulebook);
  render();
  await loadVersions();
  schedulePreview(0);
}

async function loadVersions() {
  const sel = $('saved-version');
  const r = await api('GET', '/rulebook/versions');
  const list = r.ok ? r.data.versions : [];
  fill(sel, ...list.map(v => h('option', {value: v.version, selected: v.version === state.loaded.version},
    'version ' + v.version + (v.current ? ' (in force)' : ''))));
  sel.disabled = list.length === 0;
  $('target-saved').disabled = list.length === 0;
}

async function save() {
  const btn = $('save');
  btn.disabled = true;
  try {
    const since = state.loaded.version;
    const body = state.view === 'raw' ? $('raw').value : state.doc;
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
      state.loaded = r.data;
      edit(state.loaded.rulebook);
      $('note').value = '';
      render();
      message('ok', 'Saved as version ' + state.loaded.version + '. Buyers get it from their next call.');
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
      board.show(problemsOf(r.problem));
      message('error', 'Not saved: the rulebook has problems, shown next to the fields they point to. Nothing was saved.');
      return;
    }
    message('error', 'Not saved: ' + problemText(r.problem));
  } finally {
    btn.disabled = false;
  }
}

function showView(v) {
  if (v === state.view) return;
  if (v === 'form') {
    if (state.rawBroken) {
      message('error', 'The document is not valid JSON yet (' + state.rawBroken + '). Fix it before switching to the form.');
      return;
    }
    if (!isObject(state.doc)) {
      message('error', 'The form needs the document to be a JSON object; fix it in the raw view.');
      return;
    }
  } else {
    $('raw').value = JSON.stringify(state.doc, null, 2);
  }
  state.view = v;
  $('form-view').hidden = v !== 'form';
  $('raw-view').hidden = v !== 'raw';
  $('view-form').setAttribute('aria-pressed', String(v === 'form'));
  $('view-raw').setAttribute('aria-pressed', String(v === 'raw'));
  render();
}

$('save').addEventListener('click', save);
$('discard').addEventListener('click', () => {
  edit(state.loaded.rulebook);
  message('info', 'Your edits were discarded; the form shows version ' + state.loaded.version + ' again.');
  rerender();
});
$('add-rule').addEventListener('click', addRule);
$('view-form').addEventListener('click', () => showView('form'));
$('view-raw').addEventListener('click', () => showView('raw'));
$('raw').addEventListener('input', () => {
  const slot = $('raw').parentElement.querySelector('.field-error');
  try {
    state.doc = JSON.parse($('raw').value);
    state.rawBroken = null;
    slot.textContent = '';
  } catch (e) {
    state.rawBroken = e.message;
    slot.textContent = 'Not valid JSON: ' + e.message;
  }
  changed();
});
addEventListener('beforeunload', ev => {
  if (isDirty()) ev.preventDefault();
});

await load();
setupPreview(state);
setupBacktest(state);
