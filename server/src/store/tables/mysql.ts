/**
 * @module
 * The tables for MySQL and MariaDB (drizzle-kit reads this file). Ids are ASCII and compared as
 * bytes; strings are utf8mb4 compared as bytes, so `a` and `A` are different names. Every string
 * column names its character set because drizzle-kit writes no table options.
 */
import {
  customType,
  index,
  mysqlTable,
  primaryKey,
  unique,
  type MySqlColumn,
  type MySqlTable,
  type MySqlTableExtraConfigValue,
} from 'drizzle-orm/mysql-core';
import { defineTables } from './define.ts';

const column = (type: string) => customType<{ data: unknown }>({ dataType: () => type })();
const utf8 = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';

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
} = defineTables<ReturnType<typeof column>, MySqlColumn, MySqlTableExtraConfigValue, MySqlTable>({
  table: mysqlTable,
  index,
  unique,
  primaryKey,
  // The name MySQL gives an unnamed UNIQUE constraint (its first column), which is what databases
  // created before drizzle carry; index names are per table in MySQL.
  uniqueName: (columns) => columns[0]!.name,
  id: () => column('CHAR(32) CHARACTER SET ascii COLLATE ascii_bin'),
  str: (length) => column(`VARCHAR(${length}) ${utf8}`),
  text: () => column(`LONGTEXT ${utf8}`),
  u64: () => column('BIGINT UNSIGNED'),
  i64: () => column('BIGINT'),
  int: () => column('INT'),
  bool: () => column('TINYINT'),
});
