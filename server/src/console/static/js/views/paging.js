// Server-side paging with the API's opaque next_cursor: a stack of the cursors of the pages seen so
// far, so "Previous page" goes back without keeping any items in memory. `load(cursor)` renders a
// page and returns it, or returns null when it failed (it shows the error itself).

import { h } from '../dom.js';

export function createPager(load, label = 'Pages') {
  const cursors = [undefined];
  let index = 0;
  let next;
  const previousButton = h('button', { type: 'button', class: 'button button-secondary', disabled: true }, 'Previous page');
  const nextButton = h('button', { type: 'button', class: 'button button-secondary', disabled: true }, 'Next page');
  const state = h('span', { class: 'pager-state', 'aria-live': 'polite' });
  const controls = h('nav', { class: 'pager', 'aria-label': label }, previousButton, state, nextButton);

  async function go(target) {
    const forward = target === index + 1;
    const cursor = forward ? next : cursors[target];
    previousButton.disabled = true;
    nextButton.disabled = true;
    const page = await load(cursor);
    if (page) {
      if (forward) {
        cursors.length = target;
        cursors.push(cursor);
      }
      index = target;
      next = page.next_cursor;
      state.textContent = `Page ${index + 1} · ${page.items.length} on this page${next ? '' : ' · last page'}`;
    }
    previousButton.disabled = index === 0;
    nextButton.disabled = !next;
    // Keep keyboard focus on a usable control when the pressed button becomes disabled.
    if (document.activeElement === document.body || document.activeElement?.disabled) (nextButton.disabled ? previousButton : nextButton).focus();
    return page;
  }

  previousButton.addEventListener('click', () => go(index - 1));
  nextButton.addEventListener('click', () => go(index + 1));
  return { controls, first: () => go(0) };
}
