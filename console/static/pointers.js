// Problems the admin API reports (problem+json errors[], each with a JSON
// pointer) shown next to the fields they point to, with a summary that
// lists them all and jumps to each. The rulebook editor and the product
// editor both use it.
import {h} from './console.js';
import {button} from './fields.js';

// ErrorBoard places errors in the elements under root that carry
// data-pointer, and lists them in summary. where(pointer) may name the
// part of the document a pointer is in, such as " (rule 2)".
export class ErrorBoard {
  constructor(root, summary, {where = () => '', documentName = '(the document)'} = {}) {
    this.root = root;
    this.summary = summary;
    this.where = where;
    this.documentName = documentName;
    this.errors = [];
    this.index = new Map();
  }

  // reindex finds the fields again after the form was rendered.
  reindex() {
    this.index = new Map();
    for (const el of this.root.querySelectorAll('[data-pointer]')) {
      if (el.closest('[hidden]')) continue;
      if (!this.index.has(el.dataset.pointer)) this.index.set(el.dataset.pointer, el);
    }
  }

  // target finds the element for a pointer, or for its nearest ancestor.
  target(pointer) {
    let q = pointer;
    for (;;) {
      if (this.index.has(q)) return this.index.get(q);
      if (q === '') return null;
      q = q.slice(0, q.lastIndexOf('/'));
    }
  }

  show(list) {
    this.errors = list || [];
    for (const el of this.root.querySelectorAll('.field-error')) el.replaceChildren();
    for (const el of this.root.querySelectorAll('.invalid')) el.classList.remove('invalid');
    for (const el of this.root.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    const summary = this.summary;
    summary.replaceChildren();
    if (!this.errors.length) {
      summary.hidden = true;
      return;
    }
    const items = this.errors.map(e => {
      const pointer = e.pointer || '';
      const t = this.target(pointer);
      if (t) {
        t.classList.add('invalid');
        t.querySelector(':scope > .field-error')?.append(h('span', {}, e.detail));
        for (const c of t.querySelectorAll('input, select, textarea')) {
          if (c.name === pointer || t.dataset.pointer === pointer) c.setAttribute('aria-invalid', 'true');
        }
      }
      return h('li', {}, button(pointer || this.documentName, () => this.reveal(pointer), {class: 'link'}),
        this.where(pointer), ' ', e.detail);
    });
    summary.append(h('strong', {}, this.errors.length === 1 ? '1 problem' : this.errors.length + ' problems'),
      ', each shown next to the field it points to:', h('ul', {}, items));
    summary.hidden = false;
  }

  reveal(pointer) {
    const t = this.target(pointer);
    if (!t) return;
    for (let d = t.closest('details'); d; d = d.parentElement?.closest('details')) d.open = true;
    t.scrollIntoView({block: 'center'});
    t.querySelector('input, select, textarea')?.focus();
  }
}

// problemsOf reads the field errors of a 422 problem, falling back to its
// pointer and detail.
export function problemsOf(problem) {
  return problem?.errors?.length ? problem.errors : [{pointer: problem?.pointer || '', detail: problem?.detail || ''}];
}

export function withoutPrefix(list, prefix) {
  return (list || []).map(e => ({...e, pointer: (e.pointer || '').startsWith(prefix) ? e.pointer.slice(prefix.length) : e.pointer}));
}
