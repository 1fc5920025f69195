/**
 * Both Inbox implementations through the one shared suite (client/test/inbox-suite.ts): SQLite on
 * a temp file, MySQL/MariaDB on a fresh database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import type { PoolConnection } from 'mysql2/promise';
import { MYSQL_ROOT } from '@orbit/testing';
import { MysqlInbox } from '../src/inbox/mysql.ts';
import { SqliteInbox } from '../src/inbox/sqlite.ts';
import { inboxSuite } from './inbox-suite.ts';

inboxSuite<Database.Database>('SqliteInbox', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'orbit-inbox-'));
  const path = join(dir, 'inbox.db');
  const reader = new Database(path);
  reader.pragma('journal_mode = WAL');
  reader.exec('CREATE TABLE effects (event_id TEXT NOT NULL)');
  return {
    open: async (options = {}) => new SqliteInbox({ path, ...options }),
    effect: (tx, eventId) => {
      tx.prepare('INSERT INTO effects (event_id) VALUES (?)').run(eventId);
    },
    effects: async (eventId) => (reader.prepare('SELECT COUNT(*) AS n FROM effects WHERE event_id = ?').get(eventId) as { n: number }).n,
    destroy: async () => {
      reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

inboxSuite<PoolConnection>('MysqlInbox', async () => {
  const name = `orbit_inbox_t_${randomBytes(6).toString('hex')}`;
  const admin = await mysql.createConnection({ uri: MYSQL_ROOT });
  await admin.query(`CREATE DATABASE \`${name}\``);
  await admin.query(`CREATE TABLE \`${name}\`.effects (event_id CHAR(32) NOT NULL) ENGINE=InnoDB`);
  const uri = `${MYSQL_ROOT}/${name}`;
  return {
    open: (options = {}) => MysqlInbox.open({ uri, ...options }),
    effect: async (tx, eventId) => {
      await tx.execute('INSERT INTO effects (event_id) VALUES (?)', [eventId]);
    },
    effects: async (eventId) => {
      const [rows] = await admin.query(`SELECT COUNT(*) AS n FROM \`${name}\`.effects WHERE event_id = ?`, [eventId]);
      return Number((rows as Array<{ n: number }>)[0]!.n);
    },
    destroy: async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
});
