// The backtest panel beside the preview: replay the briefs buyers really
// sent over the last days against the draft (a rulebook, or catalogue
// edits), at the time each came in, and show what would have flipped, by
// slug and by account, with the budgets involved. The run streams its
// progress and can be canceled; nothing is recorded or sent to a buyer.
import {$, h, apiStream, message, problemText, fmtTime, badge, fill} from './console.js';

const KINDS = [
  ['newly_declined', 'newly declined', 'rejected'],
  ['no_longer_declined', 'no longer declined', 'completed'],
  ['slug_changed', 'declined for another reason', 'slug'],
  ['now_empty', 'now answered with no products', 'muted'],
  ['no_longer_empty', 'now answered with products', 'completed'],
  ['now_failing', 'now the error arm', 'failed'],
  ['no_longer_failing', 'no longer the error arm', 'completed'],
];

const number = new Intl.NumberFormat('en-US', {maximumFractionDigits: 2});

function money(m) {
  const parts = Object.entries(m || {}).map(([cur, v]) => number.format(v) + ' ' + cur);
  return parts.length ? parts.join(', ') : '—';
}

let controller = null;

// setupBacktest wires the panel. draft() returns the request's draft part
// ({rulebook} or {catalogue}), or null with a message when there is none
// to run.
export function setupBacktest(state, draft = defaultDraft(state)) {
  $('bt-run').addEventListener('click', () => run(draft));
  $('bt-cancel').addEventListener('click', () => controller?.abort());
}

function defaultDraft(state) {
  return () => {
    if (state.view === 'raw' && state.rawBroken) {
      message('error', 'The document is not valid JSON yet; fix it before a backtest.');
      return null;
    }
    return {rulebook: state.doc};
  };
}

async function run(draft) {
  const part = draft();
  if (!part) return;
  const body = {...part, days: Number($('bt-days').value), baseline: $('bt-baseline').value};
  controller = new AbortController();
  $('bt-run').disabled = true;
  $('bt-cancel').hidden = false;
  const bar = $('bt-progress');
  bar.hidden = false;
  bar.removeAttribute('value');
  $('bt-status').textContent = 'Replaying…';
  $('bt-report').replaceChildren();
  let report = null;
  let failure = null;
  try {
    const r = await apiStream('POST', '/backtest', {
      body, signal: controller.signal,
      onEvent: ev => {
        if (ev.event === 'progress' && ev.progress.total > 0) {
          bar.max = ev.progress.total;
          bar.value = ev.progress.scanned;
          $('bt-status').textContent = 'Replayed ' + number.format(ev.progress.replayed) + ' of ' + number.format(ev.progress.total) +
            ' decisions; ' + number.format(ev.progress.flips) + ' flipped so far.';
        } else if (ev.event === 'report') {
          report = ev.report;
        } else if (ev.event === 'error') {
          failure = ev.problem;
        }
      },
    });
    if (!r.ok) failure = r.problem;
  } finally {
    $('bt-run').disabled = false;
    $('bt-cancel').hidden = true;
    bar.hidden = true;
    controller = null;
  }
  if (report) {
    $('bt-status').textContent = '';
    renderReport(report);
    return;
  }
  if (failure?.title === 'Canceled') {
    $('bt-status').textContent = 'Backtest canceled.';
    return;
  }
  if (failure?.status === 422) {
    $('bt-status').textContent = 'The draft is not valid yet: ' + (failure.errors || []).map(e => e.pointer + ': ' + e.detail).join('; ');
    return;
  }
  $('bt-status').textContent = 'The backtest could not run: ' + problemText(failure);
}

function table(id, caption, head, rows) {
  return h('div', {class: 'scroll'}, h('table', {class: 'data', id},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, head.map(c => h('th', {scope: 'col'}, c)))),
    h('tbody', {}, rows)));
}

function groupRows(groups, label) {
  return groups.map(g => h('tr', {'data-key': g.key},
    h('td', {}, label(g.key)),
    h('td', {class: 'num'}, number.format(g.newly_declined)),
    h('td', {class: 'num'}, number.format(g.no_longer_declined)),
    h('td', {class: 'num'}, number.format(g.slug_changed)),
    h('td', {class: 'num'}, number.format(g.now_empty + g.no_longer_empty)),
    h('td', {}, money(g.budgets.newly_declined)),
    h('td', {}, money(g.budgets.no_longer_declined))));
}

const GROUP_HEAD = ['', 'Newly declined', 'No longer declined', 'Other reason', 'Products changed', 'Budgets newly declined', 'Budgets no longer declined'];

function renderReport(rep) {
  const skipped = Object.entries(rep.skipped || {}).map(([k, n]) => number.format(n) + ' ' + k.replace(/_/g, ' ')).join(', ');
  const flips = KINDS.filter(([k]) => rep.flips[k] > 0);
  const total = flips.reduce((n, [k]) => n + rep.flips[k], 0);
  const against = rep.baseline === 'current' ? 'the rulebook and catalogue in force now' : 'what buyers were told';
  const sampled = rep.stride > 1 ? ' (every ' + rep.stride + 'th decision of ' + number.format(rep.decisions) + ')' : '';
  const summary = h('div', {id: 'bt-summary', class: 'backtest-summary'},
    h('p', {}, 'Replayed ', h('strong', {id: 'bt-replayed'}, number.format(rep.replayed)), ' briefs' + sampled + ' received ',
      rep.replayed ? fmtTime(rep.since) + ' to ' + fmtTime(rep.until) : 'in the window',
      ', against ' + (rep.draft.rulebook === 'draft' ? 'your draft rulebook' : 'the rulebook in force') +
      (rep.draft.catalogue === 'draft' ? ' and your draft catalogue' : '') + ', compared with ' + against + '.',
      skipped ? ' Not replayed: ' + skipped + '.' : ''),
    total === 0
      ? h('p', {class: 'flip-none', id: 'bt-none'}, 'Nothing would have changed for these briefs.')
      : h('p', {class: 'flips'}, flips.map(([k, label, kind]) =>
        [badge(number.format(rep.flips[k]) + ' ' + label, kind), ' '])),
    h('p', {class: 'hint'}, 'Budgets newly declined: ' + money(rep.budgets.newly_declined) + '. Budgets no longer declined: ' +
      money(rep.budgets.no_longer_declined) + '.'));
  const accounts = rep.by_account.concat(rep.other_accounts ? [rep.other_accounts] : []);
  fill($('bt-report'), summary,
    total === 0 ? null : [
      table('bt-by-slug', 'By decline slug', ['Slug', ...GROUP_HEAD.slice(1)], groupRows(rep.by_slug, k => h('code', {}, k))),
      table('bt-by-account', 'By account', ['Account', ...GROUP_HEAD.slice(1)], groupRows(accounts, k => rep.accounts[k] || k)),
      table('bt-examples', 'The most recent flips', ['Time (UTC)', 'Account', 'Brief', 'Before', 'After', 'Budget'],
        rep.examples.map(f => h('tr', {'data-sequence': f.sequence},
          h('td', {}, fmtTime(f.time)),
          h('td', {}, rep.accounts[f.account] || f.account),
          h('td', {class: 'brief'}, f.brief || ''),
          h('td', {}, answer(f.before)),
          h('td', {}, answer(f.after)),
          h('td', {}, f.budget ? number.format(f.budget.amount) + ' ' + f.budget.currency : '—'))))]);
}

function answer(a) {
  const b = badge(a.slug ? 'declined' : a.arm, a.slug ? 'rejected' : a.arm);
  return [b, a.slug ? [' ', h('code', {}, a.slug)] : null,
    a.products !== undefined && a.products !== null ? ' (' + a.products + ' products)' : null];
}
