// The console shell: hash routing, the token session, the banner of unanswered operations.
// Routes: #/queues[/QUEUE_ID] · #/subscriptions/ID[?state=S] · #/subscriptions/ID/deliveries/DID ·
// #/subscriptions/ID/backlog · #/credential · #/settings. Nothing secret is ever put in the hash.

import { clearToken, getToken } from './api.js';
import { clear, h, pageHeading } from './dom.js';
import { errorPanel } from './errors.js';
import { discardOperation, onOperationsChange, pendingOperations, retryOperation } from './ops.js';
import { backlogView } from './views/backlog.js';
import { credentialView } from './views/credential.js';
import { deliveryView } from './views/delivery.js';
import { queuesView } from './views/queues.js';
import { settingsView } from './views/settings.js';
import { subscriptionView } from './views/subscription.js';
import { subscriptionsView } from './views/subscriptions.js';
import { tokenView } from './views/token.js';

const main = document.getElementById('main');
const statusRegion = document.getElementById('status');
const session = document.getElementById('session');
const banner = document.getElementById('pending-ops');
let active = null;

/** Announces a message in the polite live region; it stays until the next navigation. */
function announce(message) {
  statusRegion.textContent = message;
}

function forgetToken() {
  clearToken();
  announce('The token was removed from this tab.');
  render();
}

function renderSession() {
  clear(session);
  if (getToken())
    session.append(
      h('span', { class: 'session-state' }, 'Token entered'),
      h('button', { type: 'button', class: 'button button-secondary', onclick: forgetToken }, 'Forget token'),
    );
}

function renderPending(operations = pendingOperations()) {
  clear(banner);
  if (operations.length === 0) return;
  banner.append(
    h(
      'section',
      { class: 'pending', 'aria-labelledby': 'pending-title' },
      h('h2', { id: 'pending-title' }, 'Unconfirmed operations'),
      h(
        'p',
        null,
        'These writes got no definitive answer. Retrying resends the same request with the same Idempotency-Key, so it is applied at most once.',
      ),
      h(
        'ul',
        null,
        operations.map((op) =>
          h(
            'li',
            null,
            h('span', null, `${op.label} `, h('code', { class: 'id' }, op.key), ' '),
            h('button', { type: 'button', class: 'button', onclick: () => retryPending(op) }, 'Retry'),
            ' ',
            h('button', { type: 'button', class: 'button button-secondary', onclick: () => discardOperation(op.id) }, 'Discard'),
          ),
        ),
      ),
    ),
  );
}

async function retryPending(op) {
  try {
    const answer = await retryOperation(op.id);
    announce(`${op.label}: confirmed${answer.data?.deduplicated ? ' (the server had already applied it)' : ''}.`);
    render({ keepStatus: true });
  } catch (error) {
    const panel = errorPanel(error, { onReload: () => render() });
    banner.prepend(panel);
    panel.focus();
  }
}

function parseHash() {
  const raw = location.hash.startsWith('#/') ? location.hash.slice(2) : 'queues';
  const [path, query = ''] = raw.split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query) };
}

function notFoundView(ctx) {
  ctx.main.append(pageHeading('Page not found'), h('p', null, h('a', { href: '#/queues' }, 'Go to the queues')));
}

function pick(parts) {
  const [first, second, third, fourth] = parts;
  if (first === 'queues' && parts.length === 1) return queuesView;
  if (first === 'queues' && parts.length === 2) return (ctx) => subscriptionsView(ctx, second);
  if ((first === 'credential' || first === 'settings') && parts.length === 1) return first === 'credential' ? credentialView : settingsView;
  if (first === 'subscriptions' && second && parts.length === 2) return (ctx) => subscriptionView(ctx, second);
  if (first === 'subscriptions' && second && third === 'backlog' && parts.length === 3) return (ctx) => backlogView(ctx, second);
  if (first === 'subscriptions' && second && third === 'deliveries' && fourth && parts.length === 4)
    return (ctx) => deliveryView(ctx, second, fourth);
  return notFoundView;
}

function markNav(parts) {
  for (const link of document.querySelectorAll('[data-nav]')) {
    // A subscription and its deliveries belong to a queue: the Queues link stays current there.
    if (link.dataset.nav === parts[0] || (parts[0] === 'subscriptions' && link.dataset.nav === 'queues'))
      link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/**
 * Renders the route of the current hash; earlier requests of the previous page are aborted. After a
 * navigation the new page's heading takes the focus (not on the first load, where Tab should reach
 * the skip link first).
 */
async function render({ keepStatus = false, initial = false } = {}) {
  active?.abort();
  const controller = new AbortController();
  active = controller;
  if (!keepStatus) announce('');
  renderSession();
  renderPending();
  clear(main);
  const { parts, params } = parseHash();
  markNav(parts);
  const ctx = {
    main,
    params,
    signal: controller.signal,
    announce,
    forgetToken,
    reload: (message) => {
      if (message) announce(message);
      return render({ keepStatus: Boolean(message) });
    },
  };
  const view = getToken() ? pick(parts) : tokenView;
  const done = view(ctx);
  if (!initial) main.querySelector('h1')?.focus();
  try {
    await done;
  } catch (error) {
    if (error?.name !== 'AbortError') main.append(errorPanel(error, { onReload: () => render(), onForgetToken: forgetToken }));
  }
}

document.querySelector('.skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', () => {
  if (location.hash === '' || location.hash.startsWith('#/')) render();
});
onOperationsChange((operations) => renderPending(operations));
render({ initial: true });
