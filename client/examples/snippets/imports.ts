/**
 * docs/sdk.md, the overview: what an application imports. The main entry loads no database
 * driver; each Inbox is its own entry, loading its own driver.
 */
// #region docs
import { connectEvents, createClient, createEventConsumer, newIdempotencyKey, OrbitError } from '@orbit/client';
import { MysqlInbox } from '@orbit/client/inbox/mysql'; // loads mysql2
import { SqliteInbox } from '@orbit/client/inbox/sqlite'; // loads better-sqlite3
// #endregion docs

export const sdk = { connectEvents, createClient, createEventConsumer, newIdempotencyKey, OrbitError, MysqlInbox, SqliteInbox };
