// The subscriptions of one queue (GET /v1/subscriptions?queue_id=…), paged with next_cursor. The
// queue is picked from the queue list (queues.js).

import { idSegment, withQuery } from '../api.js';
import { badge, breadcrumbs, dataTable, h, pageHeading, time } from '../dom.js';
import { createListPager } from './paging.js';

const PAGE_SIZES = ['20', '50', '100'];

function enabledCell(sub) {
  return sub.enabled ? badge('Enabled', 'ok') : badge('Paused', 'warn');
}

function retiredCell(sub) {
  return sub.retired_at ? h('span', null, badge('Retired', 'muted'), ' ', time(sub.retired_at)) : 'No';
}

function pendingCell(sub) {
  return h(
    'span',
    { class: 'pending-cell' },
    h('span', null, `${sub.pending_count} / ${sub.max_pending}`),
    h('meter', {
      min: '0',
      max: String(sub.max_pending),
      value: String(sub.pending_count),
      'aria-label': `${sub.pending_count} of ${sub.max_pending} pending`,
    }),
  );
}

function table(items) {
  const columns = ['Name', 'Enabled', 'Retired', 'Cursor sequence', 'Pending / max pending', 'Max attempts'];
  return dataTable('subscriptions-table', 'Subscriptions of the queue', columns, items, (sub) =>
    h(
      'tr',
      { dataset: { subscriptionId: sub.id } },
      h('th', { scope: 'row', 'data-label': columns[0] }, h('a', { href: `#/subscriptions/${sub.id}` }, sub.name)),
      h('td', { 'data-label': columns[1] }, enabledCell(sub)),
      h('td', { 'data-label': columns[2] }, retiredCell(sub)),
      h('td', { 'data-label': columns[3], class: 'num' }, sub.cursor_sequence),
      h('td', { 'data-label': columns[4], class: 'num' }, pendingCell(sub)),
      h('td', { 'data-label': columns[5], class: 'num' }, String(sub.max_attempts)),
    ),
  );
}

export async function subscriptionsView(ctx, queueId) {
  const limit = PAGE_SIZES.includes(ctx.params.get('limit')) ? ctx.params.get('limit') : '20';
  const limitSelect = h(
    'select',
    { id: 'page-size', name: 'limit' },
    PAGE_SIZES.map((n) => h('option', { value: n, selected: n === limit }, n)),
  );
  const form = h(
    'form',
    {
      class: 'card form form-inline',
      onsubmit: (event) => {
        event.preventDefault();
        const target = `#/queues/${queueId}${limitSelect.value === '20' ? '' : `?limit=${limitSelect.value}`}`;
        if (location.hash === target) ctx.reload();
        else location.hash = target;
      },
    },
    h('div', { class: 'form-row form-row-narrow' }, h('label', { for: 'page-size' }, 'Per page'), limitSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button' }, 'Show')),
  );

  const results = h('div', { class: 'results', 'aria-busy': 'false' });
  const pager = createListPager(ctx, results, {
    url: (cursor) => withQuery('/v1/subscriptions', { queue_id: queueId, limit, cursor }),
    render: table,
    empty: 'No subscriptions of this token in this queue.',
  });
  ctx.main.append(
    breadcrumbs([
      ['Queues', '#/queues'],
      ['Subscriptions', ''],
    ]),
    pageHeading('Subscriptions'),
    form,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'list-title' },
      h('h2', { id: 'list-title' }, 'Queue ', h('code', { class: 'id' }, queueId)),
      h('p', { class: 'help' }, "Newest first. Only this token's subscriptions are listed; paging is done by the server."),
      results,
      pager.controls,
    ),
  );
  idSegment(queueId);
  await pager.first();
}
