import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';
import { checkConfiguration } from '../src/probe.ts';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server on a kernel-picked loopback port that answers every request with `status` and an error envelope. */
async function answering(status: number, code: string): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ request_id: 'a'.repeat(32), error: { code, message: code.toLowerCase() } }));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function env(baseUrl: string) {
  const config = parseConfig({ baseUrl, credentials: { full: 'not-known-here', publisher: 'p' }, queues: { primary: 'a'.repeat(32) } });
  return { config, vars: {}, seed: 1, numRuns: 1, runTag: 'abc' };
}

describe('checkConfiguration', () => {
  it('stops the run when the server does not know the token of credentials.full', async () => {
    const check = checkConfiguration(env(await answering(401, 'UNAUTHENTICATED')));
    await expect(check).rejects.toThrow(ConfigError);
    await expect(check).rejects.toThrow(/the server refuses credentials\.full \(HTTP 401 UNAUTHENTICATED\)/);
  });

  it('leaves any other refusal to the cases, with a note', async () => {
    expect(await checkConfiguration(env(await answering(403, 'PERMISSION_DENIED')))).toMatch(
      /could not create a subscription \(HTTP 403\)/,
    );
  });
});
