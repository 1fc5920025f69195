// A subscription's connected sessions on every node (GET /v1/subscriptions/{id}/sessions): which
// node holds each connection, its capacity, the leases it holds, when it connected and was last
// seen. Read from the database, so it looks the same whichever node serves the console.

import { withQuery } from '../api.js';
import { dataTable, h, id, time } from '../dom.js';
import { createListPager } from './paging.js';

function sessionsTable(items) {
  const columns = ['Node', 'Session', 'Capacity', 'Leases held', 'Connected since', 'Last seen'];
  return dataTable('sessions-table', 'Connected sessions', columns, items, (s) =>
    h(
      'tr',
      { dataset: { sessionId: s.session_id, nodeId: s.node_id } },
      h('td', { 'data-label': columns[0] }, id(s.node_id)),
      h('td', { 'data-label': columns[1] }, id(s.session_id)),
      h('td', { 'data-label': columns[2], class: 'num' }, String(s.capacity)),
      h('td', { 'data-label': columns[3], class: 'num' }, `${s.leases_held} / ${s.capacity}`),
      h('td', { 'data-label': columns[4] }, time(s.connected_at)),
      h('td', { 'data-label': columns[5] }, time(s.last_seen_at)),
    ),
  );
}

export function sessionsSection(ctx, sub) {
  const results = h('div', { class: 'results' });
  const pager = createListPager(
    ctx,
    results,
    {
      url: (cursor) => withQuery(`/v1/subscriptions/${sub.id}/sessions`, { limit: '20', cursor }),
      render: sessionsTable,
      empty: 'No connected sessions on any node.',
    },
    'Session pages',
  );
  const refresh = h(
    'button',
    { type: 'button', class: 'button button-secondary', id: 'sessions-refresh', onclick: () => pager.first() },
    'Refresh',
  );
  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'sessions-title' },
    h('h2', { id: 'sessions-title' }, 'Connected sessions'),
    h(
      'p',
      { class: 'help' },
      'Every node of the deployment, newest connection first. A session whose node stopped leaves this list once the node has been silent for the node timeout (node_ttl_ms); its leases run out like any lease.',
    ),
    h('div', { class: 'actions' }, refresh),
    results,
    pager.controls,
  );
  return { section, load: () => pager.first() };
}
