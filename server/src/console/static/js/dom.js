// Small DOM helpers. Text always goes in as text nodes (never as HTML), so names, reasons and
// event data coming from the API cannot inject markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function apply(node, attrs) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
}

/** An HTML element: `h('a', { href: '#/x', class: 'link' }, 'text', child)`. */
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  apply(node, attrs);
  append(node, children);
  return node;
}

/** An SVG element, same calling convention as `h`. */
export function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  apply(node, attrs);
  append(node, children);
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

/**
 * A data table: a caption for screen readers, a header row of `columns`, and one body row per item,
 * made by `row(item)` (which labels its cells with the same `columns` for narrow screens).
 */
export function dataTable(tableId, caption, columns, items, row) {
  return h(
    'table',
    { class: 'data-table', id: tableId },
    h('caption', { class: 'visually-hidden' }, caption),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h('tbody', null, items.map(row)),
  );
}

/** A definition list from `[label, value]` rows; rows whose value is undefined are left out. */
export function fields(rows, className = 'fields') {
  return h(
    'dl',
    { class: className },
    rows
      .filter(([, value]) => value !== undefined)
      .map(([label, value]) => h('div', { class: 'field' }, h('dt', null, label), h('dd', null, value))),
  );
}

/** A UTC timestamp as a <time> element (shown as the API sent it), or a dash. */
export function time(value) {
  return value ? h('time', { datetime: value }, value) : '—';
}

/** A 32-hex id, shown in full in a monospace span that may break anywhere on narrow screens. */
export function id(value) {
  return h('code', { class: 'id' }, value);
}

export function badge(text, kind) {
  return h('span', { class: `badge badge-${kind}` }, text);
}

export function stateBadge(state) {
  return badge(state, `state-${state.toLowerCase()}`);
}

/** A heading that receives focus after navigation so screen readers announce the new page. */
export function pageHeading(text) {
  return h('h1', { tabindex: '-1', class: 'page-title' }, text);
}

/** Breadcrumb navigation from `[label, href]` pairs; the last one is the current page. */
export function breadcrumbs(items) {
  return h(
    'nav',
    { 'aria-label': 'Breadcrumb', class: 'breadcrumbs' },
    h(
      'ol',
      null,
      items.map(([label, href], index) =>
        h('li', null, index === items.length - 1 ? h('span', { 'aria-current': 'page' }, label) : h('a', { href }, label)),
      ),
    ),
  );
}

export function loading(text = 'Loading…') {
  return h('p', { class: 'loading' }, text);
}

/** A stable id for label/aria references inside one rendering. */
let counter = 0;
export function uid(prefix) {
  counter += 1;
  return `${prefix}-${counter}`;
}
