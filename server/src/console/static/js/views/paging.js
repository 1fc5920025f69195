// Server-side paging with the API's opaque next_cursor: a stack of the cursors of the pages seen so
// far, so "Previous page" goes back without keeping any items in memory. `load(cursor)` renders a
// page and returns it, or returns null when it failed (it shows the error itself).

import { apiRequest } from '../api.js';
import { clear, h, loading } from '../dom.js';
import { errorPanel } from '../errors.js';

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
    if (document.activeElement === document.body || document.activeElement?.disabled)
      (nextButton.disabled ? previousButton : nextButton).focus();
    return page;
  }

  previousButton.addEventListener('click', () => go(index - 1));
  nextButton.addEventListener('click', () => go(index + 1));
  return { controls, first: () => go(0) };
}

/**
 * A server-paged list drawn into `results`: each page comes from `url(cursor)` and is drawn by
 * `render(items)`, or as the `empty` text; a failure shows its error panel in place.
 */
export function createListPager(ctx, results, { url, render, empty }, label) {
  return createPager(async (cursor) => {
    results.setAttribute('aria-busy', 'true');
    clear(results).append(loading());
    try {
      const { data } = await apiRequest('GET', url(cursor), { signal: ctx.signal });
      clear(results).append(data.items.length > 0 ? render(data.items) : h('p', null, empty));
      return data;
    } catch (error) {
      if (error?.name === 'AbortError') return null;
      clear(results).append(errorPanel(error, { onReload: () => ctx.reload(), onForgetToken: ctx.forgetToken }));
      return null;
    } finally {
      results.setAttribute('aria-busy', 'false');
    }
  }, label);
}
