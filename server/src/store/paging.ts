/**
 * @module
 * Keyset paging shared by every list: newest first by `(created_at, id)`, one row more than the
 * page to learn whether another page follows, and a signed cursor bound to the query's scope.
 */
import { OrbitError } from '@orbit/spec/errors';
import type { PageCursors } from '../domain/page-cursor.ts';
import type { Row, Sql } from './sql.ts';

export interface Page<T> {
  readonly items: T[];
  readonly next_cursor?: string;
}

export interface PageQuery<R> {
  /** What the cursor is bound to: the list, the caller and every filter. */
  readonly scope: string;
  /** `SELECT columns FROM table`, without WHERE. */
  readonly select: string;
  /** Conditions joined with AND, and their parameters in order. */
  readonly where: readonly string[];
  readonly params: readonly unknown[];
  readonly limit: number;
  readonly cursor?: string | undefined;
  readonly toRecord: (row: Row) => R;
}

export async function newestFirst<R extends { readonly createdAt: number; readonly id: string }>(
  db: Sql,
  cursors: PageCursors,
  query: PageQuery<R>,
): Promise<Page<R>> {
  const after = query.cursor === undefined ? null : cursors.decode(query.scope, query.cursor);
  if (query.cursor !== undefined && after === null)
    throw new OrbitError('INVALID_ARGUMENT', 'cursor is invalid or was issued for another query');
  const where = [...query.where];
  const params = [...query.params];
  if (after) {
    where.push('(created_at < ? OR (created_at = ? AND id < ?))');
    params.push(after.createdAt, after.createdAt, after.id);
  }
  const rows = await db.all(
    `${query.select} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${query.limit + 1}`,
    params,
  );
  const records = rows.slice(0, query.limit).map(query.toRecord);
  const last = records[records.length - 1];
  const page: Page<R> = { items: records };
  return rows.length > query.limit && last
    ? { ...page, next_cursor: cursors.encode(query.scope, { createdAt: last.createdAt, id: last.id }) }
    : page;
}
