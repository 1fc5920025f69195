/**
 * @module
 * The tables for SQLite (drizzle-kit reads this file): TEXT and INTEGER columns, the storage
 * classes SQLite keeps these values in anyway.
 */
import {
  customType,
  index,
  primaryKey,
  sqliteTable,
  unique,
  type SQLiteColumn,
  type SQLiteTable,
  type SQLiteTableExtraConfigValue,
} from 'drizzle-orm/sqlite-core';
import { defineTables } from './define.ts';

const column = (type: string) => customType<{ data: unknown }>({ dataType: () => type })();
const text = () => column('TEXT');
const integer = () => column('INTEGER');

export const {
  orbit_meta,
  namespaces,
  applications,
  queues,
  credentials,
  credential_queues,
  result_head,
  results,
  subscriptions,
  deliveries,
  idempotency_records,
  audit_log,
  nodes,
  sessions,
} = defineTables<ReturnType<typeof column>, SQLiteColumn, SQLiteTableExtraConfigValue, SQLiteTable>({
  table: sqliteTable,
  index,
  unique,
  primaryKey,
  // drizzle-kit writes these as unique indexes, whose names are unique in the whole database:
  // drizzle's default `<table>_<columns>_unique`.
  uniqueName: () => undefined,
  id: text,
  str: text,
  text,
  u64: integer,
  i64: integer,
  int: integer,
  bool: integer,
});
