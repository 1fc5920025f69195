// The queues this token may name (GET /v1/queues; spec/README.md, The credential's own view),
// newest first and paged by the server: the console's start page, so no queue id is typed.

import { withQuery } from '../api.js';
import { dataTable, h, id, pageHeading, time } from '../dom.js';
import { createListPager } from './paging.js';

function queuesTable(items) {
  const columns = ['Name', 'Queue ID', 'Created'];
  return dataTable('queues-table', "The token's queues", columns, items, (queue) =>
    h(
      'tr',
      { dataset: { queueId: queue.id } },
      h('th', { scope: 'row', 'data-label': columns[0] }, h('a', { href: `#/queues/${queue.id}` }, queue.name)),
      h('td', { 'data-label': columns[1] }, id(queue.id)),
      h('td', { 'data-label': columns[2] }, time(queue.created_at)),
    ),
  );
}

export async function queuesView(ctx) {
  const results = h('div', { class: 'results', 'aria-busy': 'false' });
  const pager = createListPager(
    ctx,
    results,
    { url: (cursor) => withQuery('/v1/queues', { limit: '20', cursor }), render: queuesTable, empty: 'This token may name no queue.' },
    'Queue pages',
  );
  ctx.main.append(
    pageHeading('Queues'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'queues-title' },
      h('h2', { id: 'queues-title' }, "This token's queues"),
      h('p', { class: 'help' }, 'Newest first. Only the queues this token may name are listed; open one to see its subscriptions.'),
      results,
      pager.controls,
    ),
  );
  await pager.first();
}
