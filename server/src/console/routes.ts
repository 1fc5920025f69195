/**
 * @module
 * The operations console (docs/console.md): static HTML, CSS and plain ES modules under `./static/`,
 * served at `/console`. The console talks only to the public management API, with a token the
 * operator pastes into the page; nothing here reads a credential or touches the store.
 *
 * Static assets are not API responses, so they carry no envelope; they do carry
 * `Cache-Control: no-store` and a strict Content-Security-Policy (everything from this origin only,
 * no inline script or style, no framing, no form posts).
 *
 * The files are read once, when the routes are added, into an allow-list keyed by their relative
 * path: a request names one of those keys or gets 404, so no request path ever reaches the file
 * system.
 *
 * Under a base path (Orbit embedded in a host app at `/orbit`), the page's links to its assets get
 * the prefix when the page is loaded, and the scripts find the API relative to their own URL
 * (`js/api.js`), so nothing in the console names an absolute path of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hono } from 'hono';

/** The console's own directory of static files. */
export const CONSOLE_STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

/** The policy of every console response: this origin only, nothing inline, never framed. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  readonly body: Uint8Array;
  readonly type: string;
}

function headers(type: string): Record<string, string> {
  return {
    'content-type': type,
    'cache-control': 'no-store',
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}

/** Every servable file below `dir`, keyed by its `/`-separated relative path. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      const type = CONTENT_TYPES[extname(entry.name)];
      if (!entry.isFile() || type === undefined) continue;
      assets.set(relative(dir, path).split(sep).join('/'), { body: readFileSync(path), type });
    }
  };
  walk(dir);
  if (!assets.has('index.html')) throw new Error(`the console's index.html is missing from ${dir}`);
  return assets;
}

function serve(asset: Asset | undefined): Response {
  if (!asset) {
    return new Response('Not found\n', { status: 404, headers: headers('text/plain; charset=utf-8') });
  }
  return new Response(asset.body, { status: 200, headers: headers(asset.type) });
}

/** The page with its asset links (`/console/...`) moved under the base path. */
function withBasePath(page: Asset, basePath: string): Asset {
  if (basePath === '') return page;
  const html = new TextDecoder().decode(page.body).replaceAll('="/console/', `="${basePath}/console/`);
  return { ...page, body: new TextEncoder().encode(html) };
}

/**
 * Adds `GET /console` (and `/console/`: the page) and `GET /console/<file>` (its assets) to `app`,
 * whose routes are under `basePath` (`''` or `/orbit`). Call it before the app answers its first
 * request.
 */
export function consoleRoutes(app: Hono<any>, basePath = ''): void {
  const assets = loadAssets(CONSOLE_STATIC_DIR);
  const index = withBasePath(assets.get('index.html')!, basePath);
  const page = (): Response => serve(index);
  app.get('/console', page);
  app.get('/console/', page);
  app.get('/console/*', (c) => {
    const name = c.req.path.slice(`${basePath}/console/`.length);
    return serve(name === 'index.html' ? index : assets.get(name));
  });
}
