/**
 * @module
 * A list page on the wire: the items rendered by their shape's mapper, and the next page's
 * cursor when there is one (spec/README.md, Pagination).
 */
import type { Page } from '../store/store.ts';

export function pageJson<R, J>(page: Page<R>, toJson: (record: R) => J): { items: J[]; next_cursor?: string } {
  const items = page.items.map(toJson);
  return page.next_cursor === undefined ? { items } : { items, next_cursor: page.next_cursor };
}
