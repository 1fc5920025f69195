/**
 * @module
 * The SQLite store's worker thread (`sqlite.ts` starts it and holds the other end of the protocol).
 * It owns the writer connection, and for an in-memory database the only one, and runs what the
 * main thread asks, one message at a time and in order: a transaction's batch (after the few
 * statements the group commit puts in front of it: BEGIN IMMEDIATE, the RELEASE of the transaction
 * before, its own SAVEPOINT), a transaction's last batch (`finish`: its savepoint released, or
 * rolled back if a statement fails, and the group's COMMIT when it is the group's last), a COMMIT,
 * the rollback of a failed transaction's savepoint, DDL, plain reads, and the close. Every durable
 * COMMIT (an fsync) and every statement of a transaction thus runs here, off the server's event loop.
 *
 * A group whose SQLite transaction is gone (BEGIN failed, SQLite rolled everything back after an
 * error, a savepoint could not be rolled back, the COMMIT failed) is "lost": the worker answers
 * every later message of that group with the error instead of running it, so no statement of the
 * group ever runs outside its transaction, even one the main thread had already sent.
 *
 * Plain JavaScript on purpose: the same file runs from the TypeScript sources (tests, the
 * repository's `orbit`) and from the build (`scripts/build.mjs` copies it next to
 * `dist/store/sqlite.js`), where a worker started from a `.ts` file would have no loader.
 *
 * Replies are `{ id, result }` or `{ id, error, lost }`, errors as `{ message, code }`: a cloned
 * Error would keep its message but not its `code` (`SQLITE_CONSTRAINT_UNIQUE`…). `lost` is the
 * error that lost the group, or null when the group's transaction is still there.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

/**
 * What the main thread passes (`sqlite-thread.ts`): the database's path, the connection settings in
 * order, and the flags of a batch's prefix, in the order they run.
 * @type {{ path: string, pragmas: string[], flags: { BEGIN: number, RELEASE: number, SAVEPOINT: number } }}
 */
const { path, pragmas, flags } = workerData;
const { BEGIN, RELEASE, SAVEPOINT } = flags;

/**
 * Opens the writer as the main thread opens its reader: the same settings in the same order.
 * @param {string} file
 */
function open(file) {
  const db = new BetterSqlite3(file);
  for (const pragma of pragmas) db.pragma(pragma);
  db.defaultSafeIntegers(true);
  return db;
}

/** @typedef {[id: number, text: string | null, isQuery: boolean, params: unknown[]]} WireStatement */
/**
 * @typedef {{ id: number, op: 'batch', group: number, prefix: number, statements: WireStatement[] }
 *   | { id: number, op: 'finish', group: number, prefix: number, commit: boolean, statements: WireStatement[] }
 *   | { id: number, op: 'read', statements: WireStatement[] }
 *   | { id: number, op: 'commit', group: number, release: boolean }
 *   | { id: number, op: 'undo', group: number }
 *   | { id: number, op: 'exec', sql: string }
 *   | { id: number, op: 'close' }} Request
 */

const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);

/** @type {BetterSqlite3.Database | null} */
let db = null;
/** @type {unknown} Why there is no connection (it could not be opened, or it was closed): every request answers it. */
let gone = null;
try {
  db = open(path);
} catch (error) {
  gone = error;
}

/** SQL texts by the id the main thread gave them (a text is sent once, with the first batch that uses it). */
/** @type {string[]} */
const texts = [];
/** @type {Array<BetterSqlite3.Statement | undefined>} */
const prepared = [];

/** @param {BetterSqlite3.Database} conn @param {number} id */
function statement(conn, id) {
  let s = prepared[id];
  if (!s) {
    s = conn.prepare(/** @type {string} */ (texts[id]));
    prepared[id] = s;
  }
  return s;
}

/** better-sqlite3 takes no booleans; bigints pass through as 64-bit integers. */
/** @param {unknown[]} params */
function bind(params) {
  return params.some((p) => typeof p === 'boolean') ? params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p)) : params;
}

/**
 * Runs a batch in order. A query answers its rows, a command its count of changed rows.
 * @param {BetterSqlite3.Database} conn
 * @param {WireStatement[]} statements
 */
function runBatch(conn, statements) {
  // Every text first: a statement that fails must not leave a later one's text unknown.
  for (const [id, text] of statements) if (text !== null) texts[id] = text;
  return statements.map(([id, , isQuery, params]) => {
    const s = statement(conn, id);
    return isQuery ? s.all(...bind(params)) : Number(s.run(...bind(params)).changes);
  });
}

/** The group whose SQLite transaction is gone, and why. */
let lostGroup = -1;
/** @type {unknown} */
let lostError = null;

/** @param {BetterSqlite3.Database} conn @param {number} group @param {unknown} error */
function lose(conn, group, error) {
  lostGroup = group;
  lostError = error;
  if (conn.inTransaction) conn.exec('ROLLBACK');
}

/**
 * Rolls back the transaction's savepoint; false when SQLite has already rolled back the whole
 * group's transaction (it does on some errors), or cannot roll back.
 * @param {BetterSqlite3.Database} conn
 */
function undo(conn) {
  if (!conn.inTransaction) return false;
  try {
    conn.exec('ROLLBACK TO tx');
    conn.exec('RELEASE tx');
    return true;
  } catch {
    return false;
  }
}

/** @param {unknown} error */
function wire(error) {
  const e = /** @type {{ message?: unknown, code?: unknown } | null} */ (error);
  return { message: typeof e?.message === 'string' ? e.message : String(error), code: typeof e?.code === 'string' ? e.code : undefined };
}

/** @param {number} id @param {unknown} error @param {boolean} [lost] whether the error lost the group */
function fail(id, error, lost = false) {
  const e = wire(error);
  port.postMessage({ id, error: e, lost: lost ? e : null });
}

/** @param {Request} request */
function handle(request) {
  const { id } = request;
  if (request.op === 'close') {
    db?.close();
    db = null;
    gone ??= new Error('the database is closed');
    port.postMessage({ id, result: null });
    return;
  }
  const conn = db;
  if (!conn) return fail(id, gone, request.op !== 'read' && request.op !== 'exec');
  switch (request.op) {
    case 'batch':
    case 'finish': {
      if (request.group === lostGroup) return fail(id, lostError, true);
      try {
        if (request.prefix & BEGIN) conn.exec('BEGIN IMMEDIATE');
        if (request.prefix & RELEASE) conn.exec('RELEASE tx');
        if (request.prefix & SAVEPOINT) conn.exec('SAVEPOINT tx');
      } catch (error) {
        lose(conn, request.group, error);
        return fail(id, error, true);
      }
      let result;
      /** @type {unknown} */
      let failure;
      try {
        result = runBatch(conn, request.statements);
      } catch (error) {
        failure = error;
      }
      if (request.op === 'batch') {
        if (failure === undefined) return port.postMessage({ id, result });
        // The caller may go on after a failed statement, but not outside the group's transaction.
        if (!conn.inTransaction) lose(conn, request.group, failure);
        return fail(id, failure, !conn.inTransaction);
      }
      // A finish ends its transaction here, since the next one's statements may already follow:
      // released, or rolled back to its savepoint when a statement failed.
      try {
        if (failure === undefined) conn.exec('RELEASE tx');
        else if (!undo(conn)) throw failure;
      } catch (error) {
        lose(conn, request.group, error);
        return fail(id, failure ?? error, true);
      }
      if (request.commit) {
        try {
          conn.exec('COMMIT');
        } catch (error) {
          lose(conn, request.group, error);
          const e = wire(error);
          return port.postMessage({ id, error: failure === undefined ? e : wire(failure), lost: e });
        }
      }
      if (failure === undefined) return port.postMessage({ id, result });
      return fail(id, failure);
    }
    case 'read':
      try {
        return port.postMessage({ id, result: runBatch(conn, request.statements) });
      } catch (error) {
        return fail(id, error);
      }
    case 'commit':
      if (request.group === lostGroup) return fail(id, lostError, true);
      try {
        if (request.release) conn.exec('RELEASE tx');
        conn.exec('COMMIT');
      } catch (error) {
        lose(conn, request.group, error);
        return fail(id, error, true);
      }
      return port.postMessage({ id, result: null });
    case 'undo': {
      if (request.group === lostGroup) return port.postMessage({ id, result: false });
      const kept = undo(conn);
      if (!kept) lose(conn, request.group, new Error('the transaction could not be rolled back to its savepoint'));
      return port.postMessage({ id, result: kept });
    }
    case 'exec':
      try {
        conn.exec(request.sql);
      } catch (error) {
        return fail(id, error);
      }
      return port.postMessage({ id, result: null });
  }
}

port.on('message', (/** @type {Request} */ request) => {
  try {
    handle(request);
  } catch (error) {
    // Only a ROLLBACK that failed after a failure gets here: answer it rather than end the thread.
    fail(request.id, error, request.op !== 'read' && request.op !== 'exec');
  }
});
