/**
 * Long strings that need no backslash go to MariaDB as their quoted literal, not through the
 * driver's escaper (store/mysql.ts, `literalOf`): whatever a string holds, it must come back
 * exactly as it went in, through a single statement and through a transaction's packet of several.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '@orbit/testing';
import { command, query } from '../src/store/sql.ts';
import { MysqlDatabase } from '../src/store/mysql.ts';

let database: Awaited<ReturnType<typeof freshDatabase>>;
let db: MysqlDatabase;

beforeAll(async () => {
  database = await freshDatabase('mysql');
  db = new MysqlDatabase({ url: database.url, connectionLimit: 2 });
  await db.run('CREATE TABLE literal_check (id INT PRIMARY KEY, v MEDIUMTEXT CHARACTER SET utf8mb4 NOT NULL)');
});

afterAll(async () => {
  await db?.close();
  await database?.drop();
});

/** Writes `value` in a transaction's packet with other statements, and reads it back twice. */
async function roundTrip(value: string): Promise<string[]> {
  await db.transaction(async (tx) => {
    await tx.finish([command('DELETE FROM literal_check', []), command('INSERT INTO literal_check (id, v) VALUES (1, ?)', [value])]);
  });
  const [direct] = await db.all('SELECT ? AS v', [value]);
  const [stored] = await db.all('SELECT v FROM literal_check WHERE id = 1');
  const [batched] = await db.transaction((tx) => tx.batch([query('SELECT v FROM literal_check WHERE id = ?', [1])]));
  return [String(direct!.v), String(stored!.v), String(batched![0]!.v)];
}

describe('strings sent to MySQL', () => {
  const json = `{"summary":"${'x'.repeat(80)}","bytes":12345678901234567890}`;
  it.each([
    ['JSON text with double quotes only', json],
    ['a single quote', `${json}'; DROP TABLE literal_check; --`],
    ['a backslash', `${json}\\' OR 1=1 -- \\`],
    ['a JSON escape', `{"note":"line\\nbreak \\"quoted\\" \\u0000","pad":"${'y'.repeat(80)}"}`],
    ['control characters', `${json}\u0000\b\t\n\r\u001a`],
    ['characters outside the BMP', `${json}𝄞 ✓ 日本語 👍🏽`],
    ['exactly 64 characters', '"'.repeat(64)],
    ['65 characters', '"'.repeat(65)],
  ])('MUST come back exactly: %s', async (_, value) => {
    expect(await roundTrip(value)).toEqual([value, value, value]);
  });

  it('MUST come back exactly for any long string (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        // One special character at a time among ordinary ones: a string with it alone must take the
        // path that character needs, not be saved by another character that sends it to the escaper.
        fc.constantFrom('"', "'", '\\', '\u0000', '\b', '\t', '\n', '\r', '\u001a', '`', '?').chain((special) =>
          fc.string({
            unit: fc.oneof(
              { weight: 8, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
              { weight: 1, arbitrary: fc.constant(special) },
            ),
            minLength: 60,
            maxLength: 200,
          }),
        ),
        async (value) => {
          expect(await roundTrip(value)).toEqual([value, value, value]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
