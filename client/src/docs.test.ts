/**
 * docs/sdk.md stays true to the code: the DDL it shows is the DDL the Inboxes run, and every public
 * method of the management client and the event connection is documented.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OrbitClient } from './client.ts';
import { EventConnection } from './events.ts';
import { mysqlInboxDdl } from './inbox/mysql.ts';
import { sqliteInboxDdl } from './inbox/sqlite.ts';

const doc = readFileSync(new URL('../../docs/sdk.md', import.meta.url), 'utf8');

describe('docs/sdk.md', () => {
  it('MUST show the exact DDL of both Inboxes', () => {
    for (const statement of [...sqliteInboxDdl(), ...mysqlInboxDdl()]) expect(doc).toContain(`${statement};`);
  });

  it('MUST document every public method of the management client and the event connection', () => {
    const methods = (prototype: object): string[] =>
      Object.getOwnPropertyNames(prototype).filter((n) => n !== 'constructor' && !n.startsWith('#'));
    for (const method of methods(OrbitClient.prototype)) expect(doc, method).toMatch(new RegExp(`\`${method}\\(`));
    for (const method of methods(EventConnection.prototype).filter((m) => m !== 'isOpen' && m !== 'deliveries'))
      expect(doc, method).toMatch(new RegExp(`\`${method}\\(`));
  });
});
