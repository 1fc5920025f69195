/**
 * docs/sdk.md, the overview: what an application imports. The main entry loads no database
 * driver; each Inbox is its own entry, loading its own driver, so this file needs better-sqlite3
 * and not mysql2.
 */
// #region docs
import { connectEvents, createClient, createEventConsumer, ensureSubscription, OrbitError } from '@orbit/client'; // no database driver
import { SqliteInbox } from '@orbit/client/inbox/sqlite'; // needs better-sqlite3
// With MySQL instead: import { MysqlInbox } from '@orbit/client/inbox/mysql'; // needs mysql2
// #endregion docs

export const sdk = { connectEvents, createClient, createEventConsumer, ensureSubscription, OrbitError, SqliteInbox };
console.log(JSON.stringify({ loaded: Object.keys(sdk).length }));
