/**
 * The operations console (docs/console.md) in a real browser: Debian's Chromium, driven by
 * playwright-core. Data is created through the API on the SQLite store; the login page's hint is
 * a command an installed server has, and running it mints a token the API accepts; the browser
 * enters the token, picks the queue from the token's queue list, lists its subscriptions page by page, pauses a subscription (with a lost answer,
 * retried under the same Idempotency-Key), meets a STATE_CONFLICT and reloads, reads a delivery's
 * raw result, retries an EXPIRED delivery, draws the backlog, and shows a read-only token its
 * credential, permissions and the node's settings (secrets hidden). Every effect is checked through
 * the API. Screenshots go to docs/images/console-*.png.
 *
 * Chromium is required: without /usr/bin/chromium this file fails (install it with
 * `apt-get install -y --no-install-recommends chromium`; `npm test` does that itself as root on
 * Debian, and otherwise stops before the tests with that command).
 *
 * Longer than 400 lines: one Chromium page walks the console step by step against one server whose
 * data is created in beforeAll; split files would each start the browser and the server and rebuild
 * the data.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../src/config.ts';
import { CONSOLE_CSP, consoleRoutes } from '../src/console/routes.ts';
import { assembleOrbit, type OrbitNode } from '../src/server.ts';
import type { BootstrapResult } from '../src/store/principal.ts';
import { Store } from '../src/store/store.ts';
import { ALL_PERMISSIONS, api, eventually, freshDatabase, runOrbit, type TestDatabase, TestSocket } from '@orbit/testing';

const CHROMIUM = '/usr/bin/chromium';
// Screenshots go to docs/images only when asked (ORBIT_UPDATE_SCREENSHOTS=1), so a test run never
// dirties the work tree; otherwise to a temporary folder.
const IMAGES =
  process.env.ORBIT_UPDATE_SCREENSHOTS === '1'
    ? fileURLToPath(new URL('../../docs/images/', import.meta.url))
    : `${mkdtempSync(join(tmpdir(), 'orbit-console-'))}/`;

/** A secret of the server's settings: the settings page must never show it. */
const METRICS_TOKEN = 'console-test-metrics-token-never-shown';

const newKey = (): string => `console-test-${randomBytes(8).toString('hex')}`;
const hex32 = (): string => randomBytes(16).toString('hex');

/** A result a double cannot hold: the console must show it exactly as published. */
const rawResult = (n: number): string =>
  `{"order":${n},"total":123456789012345678901234567890${n},"ratio":0.1000000000000000055511151231257827,"tags":["a",{"deep":[1.0,-0,1E+2]}]}`;

describe('operations console in Chromium (sqlite)', () => {
  let db: TestDatabase;
  let store: Store;
  let orbit: OrbitNode;
  let server: Server;
  let base: string;
  let owner: BootstrapResult;
  let queueId: string;
  let browser: Browser;
  let page: Page;
  let orders: any;
  const resultsBySequence = new Map<string, string>();
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];

  const get = async (path: string): Promise<any> => {
    const res = await api(base, 'GET', path, { token: owner.token });
    expect(res.status, res.text).toBe(200);
    return res.json.data;
  };
  const deliveriesIn = async (state: string): Promise<any[]> =>
    (await get(`/v1/subscriptions/${orders.id}/deliveries?limit=100&state=${state}`)).items;
  const subscribe = async (name: string, extra: Record<string, unknown> = {}): Promise<any> => {
    const res = await api(base, 'POST', '/v1/subscriptions', {
      token: owner.token,
      key: newKey(),
      body: { name, queue_id: queueId, ...extra },
      expect: 'validateSubscriptionResult',
    });
    expect(res.status, res.text).toBe(201);
    return res.json.data.subscription;
  };
  const publish = async (n: number, type: string): Promise<void> => {
    const raw = rawResult(n);
    const res = await api(base, 'POST', `/v1/queues/${queueId}/results`, {
      token: owner.token,
      key: newKey(),
      rawBody: `{"type":"${type}","task_id":"${hex32()}","task_revision":"1","details":{"n":1.10},"result":${raw}}`,
    });
    expect(res.status, res.text).toBe(201);
    resultsBySequence.set(res.json.data.event.sequence, raw);
  };
  const configure = async (enabled: boolean, expected: string): Promise<void> => {
    const res = await api(base, 'POST', `/v1/subscriptions/${orders.id}:configure`, {
      token: owner.token,
      key: newKey(),
      body: { expected_revision: expected, enabled, reason: 'changed behind the console' },
    });
    expect(res.status, res.text).toBe(200);
  };
  const shot = (name: string): Promise<Buffer> => page.screenshot({ path: `${IMAGES}console-${name}.png`, fullPage: true });
  /** Evaluates a page expression (a string: this project compiles without the DOM library). */
  const inPage = (expression: string): Promise<unknown> => page.evaluate(expression);
  const statusText = async (text: string): Promise<void> => {
    await page.locator('#status', { hasText: text }).waitFor();
  };

  // A missing Chromium fails every test of this file (a failing beforeAll would only skip them).
  const missing = existsSync(CHROMIUM)
    ? null
    : `Chromium is required for the console test and is missing at ${CHROMIUM}: apt-get update && apt-get install -y --no-install-recommends chromium`;
  beforeEach(() => {
    if (missing) throw new Error(missing);
  });

  beforeAll(async () => {
    if (missing) return;
    mkdirSync(IMAGES, { recursive: true });

    db = await freshDatabase('sqlite');
    const settings = loadSettings(
      { ORBIT_LEASE_DURATION_MS: '300', ORBIT_METRICS: 'token', ORBIT_METRICS_TOKEN: METRICS_TOKEN },
      { listen: '127.0.0.1:0', databaseUrl: db.url },
    );
    store = await Store.open(settings.databaseUrl);
    orbit = assembleOrbit({ store, settings });
    // The console in front of the API app, as the server wires it.
    const app = new Hono();
    consoleRoutes(app);
    app.route('/', orbit.app as unknown as Hono);
    server = createAdaptorServer({ fetch: app.fetch }) as Server;
    orbit.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    owner = await store.bootstrap({ namespace: 'console', application: 'console-app', queues: ['orders'], permissions: ALL_PERMISSIONS });
    queueId = owner.queue_ids.orders!;

    // 21 older subscriptions so the list has a second page; then the one the console works on.
    for (let i = 1; i <= 21; i += 1) await subscribe(`bulk-${String(i).padStart(2, '0')}`, { max_pending: 10 * i });
    orders = await subscribe('orders-results', { max_attempts: 1 });

    // Four results: the first is acknowledged; the turn of that ACK leases the second, which is never
    // acknowledged, so with a budget of 1 it turns EXPIRED once its 300 ms lease runs out; the turn
    // that finds that out leases the third, which runs out the same way once the consumer has left.
    // The fourth waits in the log: results become deliveries when a session has room for them.
    const types = ['task.succeeded', 'task.failed', 'task.needs_review', 'task.cancelled'];
    for (let i = 0; i < types.length; i += 1) await publish(i + 1, types[i]!);
    const socket = await TestSocket.open(base, owner.token);
    expect((await socket.hello(orders.id, 1)).type).toBe('events.welcome');
    const first = await socket.deliver();
    expect((await socket.ack(first)).type).toBe('ack');
    await socket.deliver();
    await eventually(async () => (await deliveriesIn('EXPIRED')).length > 0, 10_000, 'an EXPIRED delivery');
    socket.close();
    await socket.waitClosed();
    expect(socket.invalid).toEqual([]);
    await eventually(async () => (await deliveriesIn('LEASED')).length === 0, 10_000, 'no LEASED delivery left');

    // Three more results after the consumer left: the cursor of orders-results stays behind. A new
    // subscription starts at the committed head, so its cursor shows the console how far the log is.
    for (let i = 5; i <= 7; i += 1) await publish(i, 'task.succeeded');
    await subscribe('late-results');

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Playwright gives every launch a fresh temporary user data dir and removes it on close.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, reducedMotion: 'reduce' });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.on('console', (message) => {
      // A refused request (409) or a cut connection is logged by the browser itself; that is expected.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) consoleErrors.push(message.text());
    });
    await page.addInitScript({
      content:
        "window.cspViolations = []; document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));",
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server) {
      orbit.beginShutdown();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await orbit?.close();
    if (store) {
      await store.drain();
      await store.close();
    }
    await db?.drop();
  });

  it('serves the static console with no-store and a strict CSP, and only known files', async () => {
    for (const path of ['/console', '/console/', '/console/js/main.js', '/console/console.css']) {
      const res = await fetch(base + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect((await fetch(`${base}/console/js/main.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    // Only the files under static/ are served: not the module itself, not an encoded way out.
    for (const path of [
      '/console/missing.js',
      '/console/routes.ts',
      '/console/static/index.html',
      '/console/js%2F..%2F..%2Froutes.ts',
      '/console/js/%2e%2e%2Fmain.js',
    ]) {
      const res = await fetch(base + path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
    // Dot segments are resolved before routing and leave /console altogether.
    for (const path of ['/console/../package.json', '/console/%2e%2e/server/package.json']) {
      expect((await fetch(base + path)).status, path).toBe(404);
    }
  });

  it('tells how to make a token with a command that an installed server has, and that command works', async () => {
    await page.goto(`${base}/console`);
    await page.getByRole('heading', { name: 'Enter an API token' }).waitFor();
    const commands = await page.locator('#token-help code').allTextContents();
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands) {
      // `npx orbit` is the installed package's bin (ORBIT_BIN); npm start and the repository's scripts are not there.
      expect(command).toMatch(/^npx orbit /);
      const run = await runOrbit([...command.replace(/^npx orbit /, '').split(/\s+/), '--database', db.url]);
      expect(run.code, `${command}: ${run.stderr}`).toBe(0);
      const made = JSON.parse(run.stdout) as BootstrapResult;
      const queue = Object.values(made.queue_ids)[0]!;
      expect((await api(base, 'GET', `/v1/subscriptions?queue_id=${queue}`, { token: made.token })).status).toBe(200);
      // The console's start page, the token's queue list, shows the queue the command made.
      const queues = await api(base, 'GET', '/v1/queues', { token: made.token, expect: 'validateQueueList' });
      expect(queues.json.data.items.map((q: { id: string }) => q.id)).toEqual([queue]);
    }
  });

  it('keeps the token in sessionStorage only and lists subscriptions page by page', async () => {
    const response = await page.goto(`${base}/console`);
    expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
    await page.getByRole('heading', { name: 'Enter an API token' }).waitFor();

    // Keyboard: the first Tab reaches the skip link, and focus is visibly outlined.
    await page.keyboard.press('Tab');
    expect(await inPage('document.activeElement.className')).toBe('skip-link');
    expect(await inPage('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');

    await page.getByLabel('API token').fill(owner.token);
    await page.getByLabel('API token').press('Enter');
    await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
    expect(await inPage("sessionStorage.getItem('orbit.console.token')")).toBe(owner.token);
    expect(await inPage('document.cookie')).toBe('');
    expect(await inPage('localStorage.length')).toBe(0);

    // The start page lists the token's queues (GET /v1/queues): no queue id to type.
    await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
    await page.locator('#queues-table tbody tr').first().waitFor();
    expect(await page.locator('#queues-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-queue-id')))).toEqual([
      queueId,
    ]);
    expect(await page.locator(`#queues-table tr[data-queue-id="${queueId}"] td`).allInnerTexts()).toEqual([queueId, expect.any(String)]);
    await shot('queues');
    await page.getByRole('link', { name: 'orders', exact: true }).click();
    await page.getByRole('heading', { name: 'Subscriptions', exact: true }).waitFor();
    const rows = page.locator('#subscriptions-table tbody tr');
    await page.locator('.pager-state', { hasText: 'Page 1 · 20 on this page' }).waitFor();
    expect(await rows.count()).toBe(20);
    const names = await page.locator('#subscriptions-table tbody th a').allTextContents();
    expect(names[0]).toBe('late-results');
    expect(names).toContain('orders-results');
    // enabled, retired, cursor_sequence, pending_count / max_pending, max_attempts
    const cells = await page.locator(`tr[data-subscription-id="${orders.id}"] td`).allInnerTexts();
    expect(cells.map((c) => c.trim())).toEqual(['Enabled', 'No', '3', '2 / 100', '1']);
    await shot('subscriptions');

    await page.getByRole('button', { name: 'Next page' }).click();
    await page.locator('.pager-state', { hasText: 'Page 2 · 3 on this page · last page' }).waitFor();
    // created_at DESC, id DESC: the three oldest (in any order when created in the same millisecond).
    expect((await page.locator('#subscriptions-table tbody th a').allTextContents()).sort()).toEqual(['bulk-01', 'bulk-02', 'bulk-03']);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.locator('.pager-state', { hasText: 'Page 1 · 20 on this page' }).waitFor();
    expect(page.url()).not.toContain(owner.token);
  });

  it('pauses a subscription; a lost answer is retried with the same Idempotency-Key', async () => {
    await page.getByRole('link', { name: 'orders-results' }).click();
    await page.getByRole('heading', { name: /Subscription orders-results/ }).waitFor();
    await page.locator('#history-table tbody tr[data-action="create"]').waitFor();
    expect(await page.locator('#history-table tbody tr').count()).toBe(1);

    // The first configure reaches the server, but its answer is cut off on the way back.
    const keys: string[] = [];
    let cut = true;
    const isConfigure = (url: URL): boolean => url.pathname.endsWith(':configure');
    await page.route(isConfigure, async (route) => {
      keys.push(route.request().headers()['idempotency-key']!);
      if (cut) {
        cut = false;
        await route.fetch();
        await route.abort('connectionreset');
      } else {
        await route.continue();
      }
    });
    await page.getByLabel('Reason to pause').fill('receiver maintenance');
    await page.getByRole('button', { name: 'Pause subscription' }).click();
    const lost = page.locator('.error-panel[data-code="NETWORK_ERROR"]');
    await lost.waitFor();
    expect(await inPage("JSON.parse(sessionStorage.getItem('orbit.console.operations') ?? '[]').length")).toBe(1);
    // The server did pause: exactly one new revision.
    expect(await get(`/v1/subscriptions/${orders.id}`)).toMatchObject({ enabled: false, revision: '2' });
    await shot('unconfirmed');

    await lost.getByRole('button', { name: 'Retry with the same Idempotency-Key' }).click();
    await statusText('Paused orders-results: revision 2 (the server had already applied this operation).');
    await page.unroute(isConfigure);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(await inPage("sessionStorage.getItem('orbit.console.operations')")).toBeNull();
    expect(await get(`/v1/subscriptions/${orders.id}`)).toMatchObject({ enabled: false, revision: '2' });
    await page.getByRole('button', { name: 'Resume subscription' }).waitFor();
    // The history shows the pause once, with its reason, above the creation.
    await page.locator('#history-table tbody tr:first-child[data-action="pause"]').waitFor();
    expect(
      await page
        .locator('#history-table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 4).map((td) => td.textContent))),
    ).toEqual([
      ['Paused', '2', 'receiver maintenance'],
      ['Created', '1', '—'],
    ]);
    await shot('subscription');
  });

  it('shows STATE_CONFLICT with code, message and request_id, and reloads', async () => {
    await configure(true, '2');
    await configure(false, '3');
    await page.getByLabel('Reason to resume').fill('receiver repaired');
    await page.getByRole('button', { name: 'Resume subscription' }).click();
    const conflict = page.locator('.error-panel[data-code="STATE_CONFLICT"]');
    await conflict.waitFor();
    expect(await conflict.locator('.error-request-id').innerText()).toMatch(/^[0-9a-f]{32}$/);
    expect(await conflict.locator('.error-message').innerText()).not.toBe('');
    await shot('conflict');
    await conflict.getByRole('button', { name: 'Reload current state' }).click();
    await page.locator('#history-table tbody tr:first-child[data-action="pause"] td.num', { hasText: /^4$/ }).waitFor();
    await page.getByRole('button', { name: 'Resume subscription' }).waitFor();
    expect(await get(`/v1/subscriptions/${orders.id}`)).toMatchObject({ enabled: false, revision: '4' });
  });

  it('filters deliveries by state, shows the raw result and retries an EXPIRED delivery', async () => {
    const expired = await deliveriesIn('EXPIRED');
    expect(expired.length).toBeGreaterThan(0);
    await page.getByLabel('State', { exact: true }).selectOption('EXPIRED');
    await page.getByRole('button', { name: 'Show deliveries' }).click();
    await page.getByRole('heading', { name: 'Deliveries: EXPIRED' }).waitFor();
    await page.locator('#deliveries-table').waitFor();
    const rows = page.locator('#deliveries-table tbody tr');
    expect(await rows.count()).toBe(expired.length);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-state')))).toEqual(expired.map(() => 'EXPIRED'));

    const target = expired[0];
    await page.locator(`tr[data-delivery-id="${target.id}"] a`).click();
    await page.getByRole('heading', { name: `Delivery of sequence ${target.sequence} EXPIRED` }).waitFor();
    const raw = resultsBySequence.get(target.sequence)!;
    expect(await page.locator('#result-raw').textContent()).toBe(raw);
    expect(await page.locator('#details-raw').textContent()).toBe('{"n":1.10}');
    await page
      .getByLabel(/^Indent/)
      .first()
      .check();
    const indented = (await page.locator('#result-raw').textContent())!;
    expect(indented).toContain('"total": 123456789012345678901234567890');
    expect(indented.replace(/\s+/g, '')).toBe(raw.replace(/\s+/g, ''));
    await page
      .getByLabel(/^Indent/)
      .first()
      .uncheck();

    await page.getByLabel('Additional attempts').fill('2');
    await page.getByLabel('Reason to retry').fill('receiver persistence failure repaired');
    await shot('delivery');
    await page.getByRole('button', { name: 'Retry delivery' }).click();
    await statusText('Delivery is now PENDING with an attempt budget of 3.');
    await page.getByRole('heading', { name: `Delivery of sequence ${target.sequence} PENDING` }).waitFor();

    const detail = await get(`/v1/subscriptions/${orders.id}/deliveries/${target.id}`);
    expect(detail.delivery).toMatchObject({
      id: target.id,
      state: 'PENDING',
      attempts: 1,
      attempt_budget: 3,
      lease_epoch: target.lease_epoch,
    });
    expect(await inPage("sessionStorage.getItem('orbit.console.operations')")).toBeNull();
  });

  it('draws the backlog as an SVG bar chart with the counts of the API', async () => {
    await page.getByRole('link', { name: 'Subscription', exact: true }).click();
    // The retry from the delivery page is in the subscription's history.
    const retried = page.locator('#history-table tbody tr:first-child[data-action="retry"]');
    await retried.waitFor();
    expect(await retried.locator('td').nth(3).textContent()).toBe('receiver persistence failure repaired');
    await page.getByRole('link', { name: 'Backlog chart' }).click();
    await page.locator('#backlog-result[aria-busy="false"]').waitFor();
    expect(await page.locator('svg#backlog-chart').getAttribute('role')).toBe('img');
    expect(await page.locator('svg#backlog-chart .chart-row').count()).toBe(4);
    for (const state of ['PENDING', 'LEASED', 'ACKED', 'EXPIRED']) {
      const count = (await deliveriesIn(state)).length;
      expect(await page.locator(`#backlog-table tr[data-state="${state}"] td`).innerText(), state).toBe(String(count));
    }
    const sub = await get(`/v1/subscriptions/${orders.id}`);
    expect(sub.cursor_sequence).toBe('3');
    expect(await page.locator('#backlog-table tr[data-measure="gap"] td').innerText()).toBe('4');
    await shot('backlog');
  });

  it('stays on server-side pages for a subscription with 100,000 deliveries', async () => {
    // Seeded straight into the store: 99,000 ACKED, 500 PENDING and 500 EXPIRED deliveries.
    const huge = await subscribe('huge-history', { max_pending: 1000 });
    const states = (i: number): string => (i < 500 ? 'PENDING' : i < 1000 ? 'EXPIRED' : 'ACKED');
    const started = Date.now();
    await store.db.transaction(async (tx) => {
      for (let from = 0; from < 100_000; from += 1000) {
        const rows = Array.from({ length: 1000 }, (_, k) => from + k);
        await tx.run(
          `INSERT INTO deliveries (id, subscription_id, sequence, event_id, revision, state, created_at, available_at, lease_epoch, lease_until, lease_digest, lease_session, attempts, attempt_budget, acknowledged_at) VALUES ${rows.map(() => '(?, ?, ?, ?, 1, ?, ?, ?, 1, NULL, NULL, NULL, 1, 1, NULL)').join(', ')}`,
          rows.flatMap((i) => [hex32(), huge.id, 1_000_000 + i, hex32(), states(i), started - 100_000 + i, started]),
        );
      }
    });
    const requests: URL[] = [];
    const record = (request: { url(): string }): void => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/v1/')) requests.push(url);
    };
    page.on('request', record);
    try {
      const opened = Date.now();
      await page.goto(`${base}/console#/subscriptions/${huge.id}`);
      await page.locator('#deliveries-table tbody tr').nth(19).waitFor();
      await page.locator('#history-table tbody tr[data-action="create"]').waitFor();
      const firstPaint = Date.now() - opened;
      expect(await page.locator('#deliveries-table tbody tr').count()).toBe(20);
      // Newest first: the last seeded delivery heads the list.
      expect(await page.locator('#deliveries-table tbody tr td').first().innerText()).toBe('1099999');
      await page.getByRole('navigation', { name: 'Pages', exact: true }).getByRole('button', { name: 'Next page' }).click();
      await page.locator('.pager-state', { hasText: 'Page 2 · 20 on this page' }).waitFor();
      expect(await page.locator('#deliveries-table tbody tr td').first().innerText()).toBe('1099979');

      await page.getByRole('link', { name: 'Backlog chart' }).click();
      await page.locator('#backlog-result[aria-busy="false"]').waitFor();
      expect(await page.locator('#backlog-table tr[data-state="ACKED"] td').innerText()).toBe('≥ 1000');
      expect(await page.locator('#backlog-table tr[data-state="PENDING"] td').innerText()).toBe('500');
      expect(await page.locator('#backlog-table tr[data-state="EXPIRED"] td').innerText()).toBe('500');

      // Every request asked the server for one page of at most 100 items, and there were few of them:
      // the page (subscription, sessions, history, deliveries, next page) and the backlog at its default bound
      // of 1,000 per state (10 pages of ACKED, 5 of PENDING and of EXPIRED, 1 of LEASED, plus the
      // subscription and the queue's subscriptions).
      const lists = requests.filter(
        (url) => url.pathname.endsWith('/deliveries') || url.pathname.endsWith('/history') || url.pathname === '/v1/subscriptions',
      );
      for (const url of lists) expect(Number(url.searchParams.get('limit') ?? '20'), url.href).toBeLessThanOrEqual(100);
      expect(requests.length).toBeLessThanOrEqual(5 + 2 + 10 + 5 + 5 + 1);
      console.info(`console on 100,000 deliveries: first page in ${firstPaint} ms, ${requests.length} API requests in all`);
    } finally {
      page.off('request', record);
    }
  }, 60_000);

  it('shows the connected sessions of a subscription (node, session, capacity, leases, times) and their end', async () => {
    const watched = await subscribe('watched-results', { from_sequence: '0' });
    const socket = await TestSocket.open(base, owner.token);
    expect((await socket.hello(watched.id, 2)).type).toBe('events.welcome');
    await socket.deliver();
    await socket.deliver();
    const [listed] = (await get(`/v1/subscriptions/${watched.id}/sessions`)).items;
    await page.goto(`${base}/console#/subscriptions/${watched.id}`);
    const row = page.locator(`#sessions-table tbody tr[data-session-id="${socket.sessionId}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-node-id')).toBe(listed.node_id);
    // This server's leases last 300 ms and its heartbeat renews last_seen_at: compare what holds still.
    const cells = await row.locator('td').allInnerTexts();
    expect([cells[0], cells[1], cells[2], cells[4]]).toEqual([listed.node_id, socket.sessionId, '2', listed.connected_at]);
    expect(cells[3]).toMatch(/^[0-2] \/ 2$/);
    expect(Date.parse(cells[5]!)).toBeGreaterThanOrEqual(Date.parse(listed.connected_at));
    await shot('sessions');
    socket.close();
    await socket.waitClosed();
    await eventually(async () => (await get(`/v1/subscriptions/${watched.id}/sessions`)).items.length === 0, 10_000, 'the session gone');
    await page.locator('#sessions-refresh').click();
    await page.locator('#sessions-title ~ .results', { hasText: 'No connected sessions on any node.' }).waitFor();
    expect(socket.invalid).toEqual([]);
  });

  it("shows a read-only token's queues, its credential and permissions, and the node's settings without secrets", async () => {
    const reader = await store.bootstrap({
      namespace: 'console',
      application: 'console-reader',
      queues: ['orders', 'reports'],
      permissions: ['events:read'],
    });
    const readerPage = await browser.newPage();
    const errors: string[] = [];
    readerPage.on('pageerror', (error) => errors.push(String(error)));
    try {
      await readerPage.goto(`${base}/console`);
      await readerPage.getByLabel('API token').fill(reader.token);
      await readerPage.getByLabel('API token').press('Enter');
      // Its own two queues, newest first, and no other queue of the namespace.
      await readerPage.locator('#queues-table tbody tr').nth(1).waitFor();
      const listed = (await api(base, 'GET', '/v1/queues', { token: reader.token })).json.data.items.map((q: { id: string }) => q.id);
      expect(new Set(listed)).toEqual(new Set(Object.values(reader.queue_ids)));
      expect(
        await readerPage.locator('#queues-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-queue-id'))),
      ).toEqual(listed);
      expect(await readerPage.locator('#queues-table tbody th a').allTextContents()).toEqual(
        listed.map((id: string) => Object.keys(reader.queue_ids).find((name) => reader.queue_ids[name] === id)),
      );

      await readerPage.getByRole('link', { name: 'Credential', exact: true }).click();
      await readerPage.getByRole('heading', { name: 'Credential', exact: true }).waitFor();
      await readerPage.locator('#permissions-table').waitFor();
      expect(await readerPage.locator('#credential-title ~ dl dd').allInnerTexts()).toEqual([
        reader.credential_id,
        reader.namespace_id,
        reader.application_id,
        '2 (list them)',
      ]);
      const granted = await readerPage
        .locator('#permissions-table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-permission'), tr.querySelector('td')?.textContent]));
      expect(Object.fromEntries(granted)).toEqual({
        'events:read': 'Yes',
        'events:manage': 'No',
        'events:consume': 'No',
        'results:publish': 'No',
      });
      expect(await readerPage.content()).not.toContain(reader.token);
      await readerPage.screenshot({ path: `${IMAGES}console-credential.png`, fullPage: true });

      await readerPage.getByRole('link', { name: 'Settings', exact: true }).click();
      await readerPage.locator('#settings-table').waitFor();
      const { items } = (await api(base, 'GET', '/v1/settings', { token: reader.token })).json.data;
      const shown = await readerPage
        .locator('#settings-table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-setting'), tr.querySelector('td')?.textContent]));
      expect(shown.map(([name]) => name)).toEqual(items.map((s: { name: string }) => s.name));
      expect(Object.fromEntries(shown)).toMatchObject({
        lease_duration_ms: '300',
        metrics: 'token',
        metrics_token: '[redacted]',
        database_url: db.url,
        tls_cert: '— (not set)',
      });
      expect(await readerPage.content()).not.toContain(METRICS_TOKEN);
      await readerPage.screenshot({ path: `${IMAGES}console-settings.png`, fullPage: true });
      expect(errors).toEqual([]);
    } finally {
      await readerPage.close();
    }
  });

  it('works on a narrow screen and forgets the token on request', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/console#/queues/${queueId}`);
    await page.locator('.pager-state', { hasText: 'Page 1' }).waitFor();
    expect(await inPage('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    expect(await inPage("getComputedStyle(document.querySelector('#subscriptions-table thead')).position")).toBe('absolute');
    await page.screenshot({ path: `${IMAGES}console-narrow.png` });

    await page.getByRole('button', { name: 'Forget token' }).click();
    await page.getByRole('heading', { name: 'Enter an API token' }).waitFor();
    expect(await inPage("sessionStorage.getItem('orbit.console.token')")).toBeNull();

    expect(await inPage('window.cspViolations')).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('works under a base path: Orbit mounted at /orbit in a host app', async () => {
    const prefixed = assembleOrbit({
      store,
      settings: loadSettings({}, { listen: '127.0.0.1:0', databaseUrl: db.url }),
      basePath: '/orbit',
    });
    const host = new Hono();
    host.get('/', (c) => c.text('host'));
    host.route('/', prefixed.app as unknown as Hono);
    const hostServer = createAdaptorServer({ fetch: host.fetch }) as Server;
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    const hostBase = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}`;
    const prefixedPage = await browser.newPage();
    const errors: string[] = [];
    const requests: string[] = [];
    prefixedPage.on('pageerror', (error) => errors.push(String(error)));
    prefixedPage.on('request', (request) => requests.push(new URL(request.url()).pathname));
    try {
      await prefixedPage.goto(`${hostBase}/orbit/console`);
      await prefixedPage.getByLabel('API token').fill(owner.token);
      await prefixedPage.getByLabel('API token').press('Enter');
      await prefixedPage.getByRole('link', { name: 'orders', exact: true }).click();
      await prefixedPage.locator('#subscriptions-table tbody th a', { hasText: 'orders-results' }).waitFor();
      // Every asset and every API call stayed under the prefix.
      expect(requests.filter((path) => !path.startsWith('/orbit/'))).toEqual([]);
      expect(requests).toContain('/orbit/v1/queues');
      expect(requests).toContain('/orbit/v1/subscriptions');
      expect(errors).toEqual([]);
    } finally {
      await prefixedPage.close();
      hostServer.closeAllConnections();
      await new Promise<void>((resolve) => hostServer.close(() => resolve()));
      await prefixed.close();
    }
  });
});
