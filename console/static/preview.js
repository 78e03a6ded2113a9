// The editor's preview: a sample brief or one written by hand, sent to
// the admin API against the draft and against a saved version, with the
// internal decision beside exactly what the buyer receives.
import {$, h, api, badge, fill} from './console.js';
import {splitList, isObject} from './fields.js';
import {withoutPrefix} from './pointers.js';

// state is the editor's: {loaded, doc, view, rawBroken, vocab, isDirty(),
// showErrors(list)}.
let state;
let samples = [];

const SAMPLES = [
  {name: 'Display campaign, 3,000 USD', brief: 'Display campaign for a coffee brand launch', budget: 3000, channels: 'display'},
  {name: 'Online video, 100 USD', brief: 'Video for a coffee brand launch', budget: 100},
  {name: 'Connected TV, 30,000 USD', brief: 'CTV for a streaming service launch', budget: 30000, channels: 'ctv'},
  {name: 'Billboards (DOOH)', brief: 'Billboards for a coffee launch', budget: 20000, channels: 'dooh'},
  {name: 'Display in Germany', brief: 'Display for a bank in Germany', budget: 5000, markets: 'DE'},
  {name: 'Online casino', brief: 'Promote our online casino to sports fans', budget: 10000},
  {name: 'AdCP 3.1 buyer, 100 USD', brief: 'Video for a coffee brand launch', budget: 100, version: '3.1'},
];


// soldOutSample is a brief for the first sold-out window of the saved
// rulebook, in its dates and channels: the sample tries the publisher's
// own calendar instead of dates written into the console.
function soldOutSample(rulebook) {
  for (const r of rulebook?.rules || []) {
    for (const w of r.when?.sold_out || []) {
      if (typeof w.start !== 'string' || typeof w.end !== 'string') continue;
      const channels = (w.channels || r.when.channels || []).join(', ');
      return {name: 'A flight in a sold-out window (' + w.start + ' to ' + w.end + ')',
        brief: 'A flight in the window ' + w.start + ' to ' + w.end, budget: 60000, channels, start: w.start, end: w.end};
    }
  }
  return null;
}

// setupPreview wires the preview panel to the editor's state.
export function setupPreview(s) {
  state = s;
  samples = [...SAMPLES];
  const soldOut = soldOutSample(state.loaded?.rulebook);
  if (soldOut) samples.splice(3, 0, soldOut);
  fill($('sample'), ...samples.map((s, i) => h('option', {value: i}, s.name)), h('option', {value: 'custom'}, 'Your own brief'));
  fill($('adcp-version'), ...state.vocab.adcp_versions.map(v => h('option', {value: v},
    v + (v.startsWith('3.2') ? ' (rejected arm)' : ' (declines as errors)'))));
  $('sample').addEventListener('change', () => {
    const s = samples[Number($('sample').value)];
    if (s) fillSample(s);
  });
  for (const id of ['brief', 'budget', 'currency', 'channels', 'markets', 'start', 'end', 'brand', 'industries', 'adcp-version']) {
    $(id).addEventListener('input', () => {
      $('sample').value = 'custom';
      rebuildRequest();
    });
  }
  $('request-json').addEventListener('input', () => schedulePreview());
  for (const el of document.querySelectorAll('input[name=target]')) el.addEventListener('change', () => schedulePreview(0));
  $('saved-version').addEventListener('change', () => {
    $('target-saved').checked = true;
    schedulePreview(0);
  });
  $('brief-form').addEventListener('submit', ev => ev.preventDefault());
  fillSample(samples[0]);
}

// currentBrief is the request the preview shows, or null while it is not
// valid JSON.
export function currentBrief() {
  return currentRequest();
}

let previewTimer = 0;
let previewSeq = 0;

function fillSample(s) {
  $('brief').value = s.brief || '';
  $('budget').value = s.budget ?? '';
  $('currency').value = s.currency || 'USD';
  $('channels').value = s.channels || '';
  $('markets').value = s.markets || '';
  $('start').value = s.start || '';
  $('end').value = s.end || '';
  $('brand').value = s.brand || '';
  $('industries').value = s.industries || '';
  $('adcp-version').value = s.version || state.vocab.adcp_versions[state.vocab.adcp_versions.length - 1];
  rebuildRequest();
}

function formRequest() {
  const r = {adcp_version: $('adcp-version').value, buying_mode: 'brief', brief: $('brief').value};
  const f = {};
  const budget = $('budget').value.trim();
  if (budget !== '') f.budget_range = {max: Number(budget), currency: $('currency').value.trim().toUpperCase() || 'USD'};
  const ch = splitList($('channels').value);
  if (ch.length) f.channels = ch;
  if ($('start').value) f.start_date = $('start').value;
  if ($('end').value) f.end_date = $('end').value;
  if (Object.keys(f).length) r.filters = f;
  const mk = splitList($('markets').value).map(s => s.toUpperCase());
  if (mk.length) r.targeting_overlay = {geo_countries: mk};
  const domain = $('brand').value.trim();
  const ind = splitList($('industries').value);
  if (domain || ind.length) {
    r.brand = {};
    if (domain) r.brand.domain = domain;
    if (ind.length) r.brand.industries = ind;
  }
  return r;
}

function rebuildRequest() {
  $('request-json').value = JSON.stringify(formRequest(), null, 2);
  schedulePreview(0);
}

function currentRequest() {
  const err = $('request-error');
  err.textContent = '';
  try {
    const r = JSON.parse($('request-json').value);
    if (!isObject(r)) throw new Error('the request must be a JSON object');
    return r;
  } catch (e) {
    err.textContent = 'The request is not valid JSON: ' + e.message;
    return null;
  }
}

export function schedulePreview(ms = 350) {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(runPreview, ms);
}

async function runPreview() {
  if (!state.loaded || !samples.length) return;
  const seq = ++previewSeq;
  const req = currentRequest();
  if (!req) return;
  const target = document.querySelector('input[name=target]:checked').value;
  const savedV = Number($('saved-version').value) || state.loaded.version;
  document.body.classList.add('previewing');
  const draftCall = state.view === 'raw' && state.rawBroken ? Promise.resolve(null)
    : api('POST', '/rulebook/preview', {body: {rulebook: state.doc, request: req}});
  const savedCall = savedV > 0 ? api('POST', '/preview?version=' + encodeURIComponent(savedV), {body: req}) : Promise.resolve(null);
  const [draft, saved] = await Promise.all([draftCall, savedCall]);
  if (seq !== previewSeq) return;
  document.body.classList.remove('previewing');
  if (draft && draft.status === 422) state.showErrors(withoutPrefix(draft.problem.errors, '/rulebook'));
  else if (draft && draft.ok) state.showErrors([]);

  const statusOf = (r, id) => {
    let b;
    if (!r) b = h('span', {}, '—');
    else if (r.status === 422) b = badge('not valid', 'invalid');
    else if (!r.ok) b = badge('error', 'failed');
    else b = badge(r.data.buyer.status);
    b.id = id;
    return b;
  };
  fill($('compare'), 
    h('span', {}, savedV > 0 ? 'Saved version ' + savedV + ': ' : 'No saved version: '), statusOf(saved, 'compare-saved'),
    h('span', {class: 'arrow'}, ' → '),
    h('span', {}, 'Your draft' + (state.isDirty() ? ' (unsaved)' : ' (no edits)') + ': '), statusOf(draft, 'compare-draft'));

  const shown = target === 'draft' ? draft : saved;
  renderPreview(shown, req);
}

function renderPreview(r, req) {
  const dec = $('decision');
  const buyer = $('buyer');
  if (!r) {
    fill(dec, h('p', {class: 'hint'}, 'Nothing to preview yet.'));
    buyer.replaceChildren();
    return;
  }
  if (r.status === 422) {
    const n = r.problem.errors?.length || 1;
    fill(dec, h('p', {class: 'warn-text'}, 'The draft is not valid yet: ' + n + (n === 1 ? ' problem' : ' problems') + ', shown next to the fields.'));
    fill(buyer, h('p', {class: 'hint'}, 'A rulebook that is not valid cannot be saved, so no buyer would see it.'));
    return;
  }
  if (!r.ok) {
    fill(dec, h('p', {class: 'warn-text'}, problemText(r.problem)));
    buyer.replaceChildren();
    return;
  }
  renderDecision(r.data, req);
  renderBuyer(r.data.buyer);
}

function facts(pairs) {
  return h('dl', {class: 'facts'}, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function renderDecision(data, req) {
  const d = data.decision || {};
  const fired = d.rules_fired || [];
  const arm = badge(data.buyer.status);
  arm.id = 'decision-status';
  const excluded = Object.entries(d.excluded_by || {}).map(([k, v]) => k + ' ' + v).join(', ');
  fill($('decision'), 
    facts([
      ['Outcome', arm],
      ['Rulebook', data.draft ? 'your draft (not saved)' : 'version ' + data.rulebook_version],
      ['Catalogue', 'version ' + d.catalogue_version],
      ['AdCP served', d.served_version || '—'],
      ['Brief', h('span', {class: 'brief-echo', id: 'decision-brief'}, typeof req.brief === 'string' ? req.brief : JSON.stringify(req.brief ?? ''))],
      d.disclosure_cap ? ['Disclosure cap', d.disclosure_cap] : null,
      d.products_considered ? ['Products', d.products_matched + ' matched of ' + d.products_considered + (excluded ? '; excluded by ' + excluded : '')] : null,
      d.forced ? ['Forced', 'yes (compliance directive)'] : null,
      d.error ? ['Error', h('span', {class: 'warn-text'}, d.error)] : null,
    ]),
    h('h4', {}, 'Rules fired'),
    fired.length
      ? h('ol', {class: 'fired', id: 'rules-fired'}, fired.map((f, i) => h('li', {class: i === 0 ? 'leads' : ''},
        h('div', {class: 'fired-head'}, h('code', {class: 'rule-id'}, f.id), i === 0 ? badge('leads the decline', 'muted') : null),
        h('div', {class: 'rule-name'}, f.name),
        h('div', {class: 'hint'}, f.slug + ' · disclosure ' + f.disclosure))))
      : h('p', {class: 'hint', id: 'rules-fired'}, 'No rule fired.'),
    (d.suggestions_offered || []).length
      ? [h('h4', {}, 'Suggestions offered (' + d.suggestion_checks + ' checked)'),
        h('ul', {}, d.suggestions_offered.map(s => h('li', {}, h('code', {}, (s.kinds || []).join('+')), ' ', s.text)))]
      : null);
}

function renderBuyer(b) {
  const p = b.payload && typeof b.payload === 'object' ? b.payload : {};
  const status = badge(b.status);
  status.id = 'buyer-status';
  const products = Array.isArray(p.products) ? p.products : null;
  const errs = Array.isArray(p.errors) ? p.errors : null;
  let pretty = b.payload_text;
  try {
    pretty = JSON.stringify(JSON.parse(b.payload_text), null, 2);
  } catch { /* shown as sent */ }
  fill($('buyer'), 
    facts([['Status', status], ['MCP isError', String(b.mcp_is_error)]]),
    typeof p.reason === 'string' ? [h('h4', {}, 'Reason'), h('p', {class: 'reason', id: 'buyer-reason'}, p.reason)] : null,
    Array.isArray(p.suggestions) && p.suggestions.length
      ? [h('h4', {}, 'Suggestions'), h('ul', {id: 'buyer-suggestions'}, p.suggestions.map(s => h('li', {}, typeof s === 'string' ? s : JSON.stringify(s))))]
      : null,
    products ? [h('h4', {}, products.length + (products.length === 1 ? ' product' : ' products')),
      h('ul', {}, products.slice(0, 12).map(x => h('li', {}, String(x.name || x.product_id || ''))))] : null,
    errs ? [h('h4', {}, 'Errors'), h('ul', {}, errs.map(e => h('li', {}, h('code', {}, String(e.code || '')), ' ', String(e.message || ''))))] : null,
    h('h4', {}, 'Payload'),
    h('pre', {class: 'payload', id: 'buyer-payload'}, pretty),
    h('details', {}, h('summary', {}, 'Exact bytes (MCP content[0].text, A2A data part)'), h('pre', {class: 'payload'}, b.payload_text)),
    h('details', {}, h('summary', {}, 'MCP tools/call result'), h('pre', {class: 'payload'}, JSON.stringify(b.mcp_result, null, 2))));
}
