// A subscription's configuration history (GET /v1/subscriptions/{id}/history): who changed what,
// when and why, newest first, paged by the server like the deliveries.

import { withQuery } from '../api.js';
import { dataTable, h, time } from '../dom.js';
import { createListPager } from './paging.js';

const ACTIONS = { create: 'Created', pause: 'Paused', resume: 'Resumed', retire: 'Retired', retry: 'Delivery retried' };

function details(subscriptionId, entry) {
  if (entry.action === 'create') return `from_sequence ${entry.from_sequence ?? '?'}`;
  if (entry.action === 'retire') return `retired_sequence ${entry.retired_sequence ?? '?'}`;
  if (entry.action === 'retry') {
    return h(
      'span',
      null,
      h(
        'a',
        { href: `#/subscriptions/${subscriptionId}/deliveries/${entry.delivery_id}`, 'aria-label': `Delivery ${entry.delivery_id}` },
        h('code', { class: 'id' }, `${String(entry.delivery_id).slice(0, 12)}…`),
      ),
      ` +${entry.additional_attempts} attempts, budget ${entry.attempt_budget}`,
    );
  }
  return '';
}

function historyTable(subscriptionId, items) {
  const columns = ['When', 'Action', 'Revision', 'Reason', 'Details'];
  return dataTable('history-table', 'Configuration history', columns, items, (entry) =>
    h(
      'tr',
      { dataset: { action: entry.action } },
      h('td', { 'data-label': columns[0] }, time(entry.created_at)),
      h('td', { 'data-label': columns[1] }, ACTIONS[entry.action] ?? entry.action),
      h('td', { 'data-label': columns[2], class: 'num' }, entry.revision),
      h('td', { 'data-label': columns[3] }, entry.reason || '—'),
      h('td', { 'data-label': columns[4] }, details(subscriptionId, entry)),
    ),
  );
}

export function historySection(ctx, sub) {
  const results = h('div', { class: 'results' });
  const pager = createListPager(
    ctx,
    results,
    {
      url: (cursor) => withQuery(`/v1/subscriptions/${sub.id}/history`, { limit: '10', cursor }),
      render: (items) => historyTable(sub.id, items),
      empty: 'No recorded changes.',
    },
    'History pages',
  );
  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'history-title' },
    h('h2', { id: 'history-title' }, 'Configuration history'),
    h(
      'p',
      { class: 'help' },
      `Current revision ${sub.revision}. Every pause, resume, retire and delivery retry with its reason, newest first; a change and its entry commit together.`,
    ),
    results,
    pager.controls,
  );
  return { section, load: () => pager.first() };
}
