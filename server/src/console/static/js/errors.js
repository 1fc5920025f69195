// How a failed request is shown: code, message and request_id always; a reload for STATE_CONFLICT;
// a retry with the same Idempotency-Key when no definitive answer arrived.

import { h, id } from './dom.js';

const HINTS = {
  STATE_CONFLICT:
    'The resource changed since this page was loaded (another revision or state). Reload to see the current state, then decide again.',
  IDEMPOTENCY_CONFLICT: 'This Idempotency-Key was already used for a different request.',
  UNAUTHENTICATED: 'The token was not accepted. Enter another token.',
  PERMISSION_DENIED:
    'The token lacks the permission for this action (events:read to look, events:manage to act); the Credential page shows what it holds.',
  NOT_FOUND: "Not found within this token's queues and subscriptions.",
  UNAVAILABLE: 'A temporary failure on the server. Retrying is safe.',
  NETWORK_ERROR: 'The request may or may not have reached the server.',
};

/**
 * An alert describing `error`. `actions` may hold `onReload` (shown for STATE_CONFLICT),
 * `onRetry` (shown when the operation was kept for a retry) and `onForgetToken`.
 */
export function errorPanel(error, actions = {}) {
  if (!error || error.code === undefined) {
    return h(
      'div',
      { class: 'error-panel', role: 'alert' },
      h('p', { class: 'error-title' }, 'Something went wrong'),
      h('p', null, String(error?.message ?? error)),
    );
  }
  const buttons = [];
  if (error.code === 'STATE_CONFLICT' && actions.onReload) {
    buttons.push(h('button', { type: 'button', class: 'button', onclick: actions.onReload }, 'Reload current state'));
  }
  if (error.operation && actions.onRetry) {
    buttons.push(h('button', { type: 'button', class: 'button', onclick: actions.onRetry }, 'Retry with the same Idempotency-Key'));
  }
  if (error.code === 'UNAUTHENTICATED' && actions.onForgetToken) {
    buttons.push(h('button', { type: 'button', class: 'button button-secondary', onclick: actions.onForgetToken }, 'Enter another token'));
  }
  return h(
    'div',
    { class: 'error-panel', role: 'alert', tabindex: '-1', dataset: { code: error.code } },
    h('p', { class: 'error-title' }, h('strong', null, error.code), error.status ? ` (HTTP ${error.status})` : ''),
    h(
      'dl',
      { class: 'fields' },
      h('div', { class: 'field' }, h('dt', null, 'Message'), h('dd', { class: 'error-message' }, error.message || '—')),
      h(
        'div',
        { class: 'field' },
        h('dt', null, 'request_id'),
        h('dd', { class: 'error-request-id' }, error.requestId ? id(error.requestId) : 'none (no answer from the server)'),
      ),
    ),
    HINTS[error.code] ? h('p', null, HINTS[error.code]) : null,
    error.operation
      ? h(
          'p',
          null,
          `The operation "${error.operation.label}" is kept in this tab with Idempotency-Key `,
          id(error.operation.key),
          '; a retry cannot apply it twice.',
        )
      : null,
    buttons.length > 0 ? h('div', { class: 'actions' }, buttons) : null,
  );
}
