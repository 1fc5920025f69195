// The token's credential (GET /v1/credential; spec/README.md, The credential's own view): who it is
// and what it may do, read-only. The API never sends the token or its digest, so neither is shown.

import { apiRequest } from '../api.js';
import { clear, dataTable, fields, h, id, loading, pageHeading } from '../dom.js';

/** Every permission a credential can hold, and what it opens in the console (the API's reference says it per operation). */
const PERMISSIONS = [
  ['events:read', 'See queues, subscriptions, deliveries, history, sessions, this page and the settings.'],
  ['events:manage', 'Create, pause, resume and retire subscriptions; retry EXPIRED deliveries.'],
  ['events:consume', 'Open event connections and acknowledge deliveries (not used by the console).'],
  ['results:publish', 'Append results to its queues (not used by the console).'],
];

function permissionsTable(granted) {
  const columns = ['Permission', 'Granted', 'Allows'];
  return dataTable('permissions-table', 'Permissions of this credential', columns, PERMISSIONS, ([name, allows]) =>
    h(
      'tr',
      { dataset: { permission: name, granted: String(granted.includes(name)) } },
      h('th', { scope: 'row', 'data-label': columns[0] }, h('code', null, name)),
      h('td', { 'data-label': columns[1] }, granted.includes(name) ? 'Yes' : 'No'),
      h('td', { 'data-label': columns[2] }, allows),
    ),
  );
}

export async function credentialView(ctx) {
  const body = h('div', { class: 'results', 'aria-busy': 'true' }, loading());
  ctx.main.append(pageHeading('Credential'), body);
  const { data } = await apiRequest('GET', '/v1/credential', { signal: ctx.signal });
  // A permission the API names that this page does not know yet is still listed.
  const unknown = data.permissions.filter((p) => !PERMISSIONS.some(([name]) => name === p));
  clear(body).append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'credential-title' },
      h('h2', { id: 'credential-title' }, 'This token'),
      fields([
        ['credential_id', id(data.credential_id)],
        ['namespace_id', id(data.namespace_id)],
        ['application_id', id(data.application_id)],
        ['Queues', h('a', { href: '#/queues' }, `${data.queue_count} (list them)`)],
      ]),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'permissions-title' },
      h('h2', { id: 'permissions-title' }, 'Permissions'),
      h('p', { class: 'help' }, 'Read-only: permissions are set when the credential is made (orbit bootstrap --permissions).'),
      permissionsTable(data.permissions),
      unknown.length > 0 ? h('p', null, 'Also granted: ', unknown.join(', ')) : null,
    ),
  );
  body.setAttribute('aria-busy', 'false');
}
