// Shared by every console page: the session, the admin API client, and
// DOM helpers that only ever turn data into text nodes.
//
// Safety rules for this code, which the page's Content-Security-Policy
// also enforces: no innerHTML, outerHTML, insertAdjacentHTML or
// document.write; no string ever becomes markup, a URL or an event
// handler. Data goes into textContent, into form values, or into
// attributes that are neither URLs nor handlers.

const KEY = 'storefront.console.session';

// IDLE is how long a session lasts without a call to the admin API.
export const IDLE = 8 * 60 * 60 * 1000;

// The session lives in this tab's sessionStorage: it is gone when the tab
// closes or after IDLE without use, it is never sent anywhere
// automatically (unlike a cookie), and the token is only ever sent in an
// Authorization header.
export function getSession() {
  let s = null;
  try {
    s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
  } catch {
    s = null;
  }
  if (!s || typeof s.token !== 'string' || typeof s.publisher !== 'string') return null;
  if (!(s.expires > Date.now())) {
    clearSession();
    return null;
  }
  return s;
}

export function setSession(s) {
  sessionStorage.setItem(KEY, JSON.stringify({...s, expires: Date.now() + IDLE}));
}

export function clearSession() {
  sessionStorage.removeItem(KEY);
}

export function requireSession() {
  const s = getSession();
  if (!s) {
    location.replace('./');
    throw new Error('not signed in');
  }
  return s;
}

function parseETag(v) {
  if (!v) return null;
  const m = /^(?:W\/)?"?(\d+)"?$/.exec(v.trim());
  return m ? Number(m[1]) : null;
}

// api calls the admin API for the signed-in publisher. path is relative to
// /admin/v1/publishers/<publisher>. It resolves to {status, ok, etag,
// data, problem, blob}; a 401 ends the session.
export async function api(method, path, opts = {}) {
  const s = requireSession();
  const headers = {
    Authorization: 'Bearer ' + s.token,
    Accept: opts.blob ? 'image/svg+xml' : 'application/json, application/problem+json',
  };
  let body;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  if (opts.ifMatch !== undefined) headers['If-Match'] = '"' + opts.ifMatch + '"';
  Object.assign(headers, opts.headers || {});
  const url = '/admin/v1/publishers/' + encodeURIComponent(s.publisher) + path;
  let res;
  try {
    res = await fetch(url, {
      method, headers, body,
      credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer',
    });
  } catch (err) {
    return {status: 0, ok: false, etag: null, data: null, blob: null,
      problem: {title: 'Network error', detail: 'The storefront could not be reached: ' + err.message}};
  }
  if (res.status === 401) {
    clearSession();
    location.replace('./?expired=1');
    throw new Error('session ended');
  }
  setSession(s);
  const out = {status: res.status, ok: res.ok, etag: parseETag(res.headers.get('ETag')), data: null, problem: null, blob: null};
  const ct = res.headers.get('Content-Type') || '';
  if (opts.blob && res.ok) {
    out.blob = await res.blob();
  } else if (ct.includes('json')) {
    const j = await res.json();
    if (ct.includes('problem+json') || !res.ok) out.problem = j;
    else out.data = j;
  } else if (!res.ok) {
    out.problem = {title: res.statusText || 'Error', status: res.status, detail: await res.text()};
  }
  return out;
}

// apiStream calls an admin API route that answers with JSON lines
// (application/x-ndjson) and hands each parsed line to onEvent as it
// arrives. Aborting signal cancels the call, and the server stops the
// work. It resolves to {status, ok, problem}.
export async function apiStream(method, path, {body, signal, onEvent}) {
  const s = requireSession();
  const url = '/admin/v1/publishers/' + encodeURIComponent(s.publisher) + path;
  let res;
  try {
    res = await fetch(url, {
      method, signal,
      headers: {Authorization: 'Bearer ' + s.token, Accept: 'application/x-ndjson, application/problem+json', 'Content-Type': 'application/json'},
      body: JSON.stringify(body),
      credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer',
    });
  } catch (err) {
    return {status: 0, ok: false, problem: {title: err.name === 'AbortError' ? 'Canceled' : 'Network error', detail: err.message}};
  }
  if (res.status === 401) {
    clearSession();
    location.replace('./?expired=1');
    throw new Error('session ended');
  }
  setSession(s);
  if (!res.ok) {
    let problem;
    try {
      problem = await res.json();
    } catch {
      problem = {title: res.statusText || 'Error', status: res.status};
    }
    return {status: res.status, ok: false, problem};
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      buf += decoder.decode(value, {stream: true});
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) onEvent(JSON.parse(line));
      }
    }
  } catch (err) {
    return {status: res.status, ok: false, problem: {title: err.name === 'AbortError' ? 'Canceled' : 'Cut short', detail: err.message}};
  }
  return {status: res.status, ok: true, problem: null};
}

// h builds an element. Children that are not nodes become text nodes.
export function h(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'value') e.value = v;
    else if (k === 'checked') e.checked = Boolean(v);
    else if (k === 'selected') e.selected = Boolean(v);
    else if (k === 'hidden') e.hidden = Boolean(v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (k.startsWith('on') || k === 'href' || k === 'src' || k === 'style' || k === 'srcdoc') {
      throw new Error('h: refusing to set ' + k + ' from a value');
    } else e.setAttribute(k, v === true ? '' : String(v));
  }
  add(e, children);
  return e;
}

export function add(parent, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    parent.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return parent;
}

export function $(id) {
  return document.getElementById(id);
}

// ptr joins segments into a JSON pointer (RFC 6901).
export function ptr(...segs) {
  return segs.map(s => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

let uidSeq = 0;
export function uid(prefix = 'f') {
  uidSeq++;
  return prefix + '-' + uidSeq;
}

// message shows a notice in #messages. kind is info, ok, warn or error.
// Extra nodes (buttons) may follow the text.
export function message(kind, text, ...extra) {
  const box = $('messages');
  box.replaceChildren();
  if (!text) return null;
  const m = h('div', {class: 'msg msg-' + kind, role: kind === 'error' || kind === 'warn' ? 'alert' : 'status'},
    h('span', {class: 'msg-text'}, text), ...extra);
  box.append(m);
  return m;
}

// problemText turns a problem+json into one line.
export function problemText(p) {
  if (!p) return 'Unknown error';
  return [p.title, p.detail].filter(Boolean).join(': ');
}

export function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
}

export function badge(text, kind) {
  return h('span', {class: 'badge badge-' + (kind || text)}, text);
}

let vocabPromise;
export function vocabulary() {
  vocabPromise ||= fetch('vocabulary.json', {cache: 'no-store', credentials: 'omit'}).then(r => r.json());
  return vocabPromise;
}

// page sets up the shared header of a signed-in page and returns the
// session.
export async function page() {
  const s = requireSession();
  const who = $('who');
  if (who) who.textContent = s.publisher;
  const out = $('signout');
  if (out) {
    out.addEventListener('click', () => {
      clearSession();
      location.replace('./?signedout=1');
    });
  }
  api('GET', '').then(r => {
    if (r.ok && r.data && who) who.textContent = r.data.name ? r.data.name + ' (' + s.publisher + ')' : s.publisher;
  });
  return s;
}

// stable stringifies with sorted keys, so two documents that differ only
// in key order compare equal.
export function stable(v) {
  if (Array.isArray(v)) return '[' + v.map(stable).join(',') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.keys(v).sort().filter(k => v[k] !== undefined)
      .map(k => JSON.stringify(k) + ':' + stable(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

export function clone(v) {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

// fill replaces an element's children; arrays are flattened and null,
// undefined and false are left out.
export function fill(el, ...children) {
  el.replaceChildren();
  return add(el, children);
}

// ask shows a confirmation in box: the question, a button that runs
// onConfirm (with id, so tests and keyboards find it) and Cancel.
export function ask(box, question, label, id, onConfirm) {
  fill(box,
    h('p', {}, question),
    h('button', {type: 'button', class: 'primary', id, onclick: () => { box.hidden = true; onConfirm(); }}, label),
    h('button', {type: 'button', onclick: () => { box.hidden = true; }}, 'Cancel'));
  box.hidden = false;
  $(id).focus();
}

// saveBlob offers a downloaded file, fetched with the token, from a
// blob: URL: the token never goes into a link.
export function saveBlob(blob, name) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// rollBack asks the API to save an earlier version as the newest, with
// If-Match since. It reports a refusal through say(kind, text, ...nodes),
// staleText(current, since) saying what changed meanwhile, with a button
// that runs reload; it resolves to the new version, or null.
export async function rollBack(path, version, since, {say, reload, staleText}) {
  const r = await api('POST', path, {body: {version}, ifMatch: since});
  if (r.status === 412) {
    say('error', 'Not rolled back: ' + staleText(r.problem.current_version, since) + '. Nothing was overwritten.',
      h('button', {type: 'button', onclick: () => { say(''); reload(); }}, 'Reload'));
    return null;
  }
  if (!r.ok) {
    say('error', 'Not rolled back: ' + problemText(r.problem));
    return null;
  }
  return r.data;
}
