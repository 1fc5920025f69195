// The subscriptions of one queue (GET /v1/subscriptions?queue_id=…), paged with next_cursor.

import { idSegment, withQuery } from '../api.js';
import { badge, dataTable, h, pageHeading, time } from '../dom.js';
import { createListPager } from './paging.js';

const QUEUE_KEY = 'orbit.console.queue';
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
  const remembered = queueId ?? sessionStorage.getItem(QUEUE_KEY) ?? '';
  const queueInput = h('input', {
    id: 'queue-id',
    name: 'queue_id',
    required: true,
    value: remembered,
    pattern: '[0-9a-f]{32}',
    maxlength: '32',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'queue-help',
    class: 'input-id',
  });
  const limitSelect = h(
    'select',
    { id: 'page-size', name: 'limit' },
    PAGE_SIZES.map((n) => h('option', { value: n, selected: n === limit }, n)),
  );
  const problem = h('p', { class: 'field-error', role: 'alert' });
  const form = h(
    'form',
    {
      class: 'card form form-inline',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        const value = queueInput.value.trim().toLowerCase();
        if (!/^[0-9a-f]{32}$/.test(value)) {
          problem.textContent = 'A queue id is 32 lower-case hexadecimal characters.';
          queueInput.setAttribute('aria-invalid', 'true');
          queueInput.focus();
          return;
        }
        const target = `#/queues/${value}${limitSelect.value === '20' ? '' : `?limit=${limitSelect.value}`}`;
        if (location.hash === target) ctx.reload();
        else location.hash = target;
      },
    },
    h(
      'div',
      { class: 'form-row' },
      h('label', { for: 'queue-id' }, 'Queue ID'),
      queueInput,
      h(
        'p',
        { id: 'queue-help', class: 'help' },
        "The 32-character id of a queue in this token's scope (orbit bootstrap --json prints it as queue_ids).",
      ),
    ),
    h('div', { class: 'form-row form-row-narrow' }, h('label', { for: 'page-size' }, 'Per page'), limitSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button' }, 'List subscriptions')),
    problem,
  );

  ctx.main.append(pageHeading('Subscriptions'), form);
  if (!queueId) return;
  idSegment(queueId);
  sessionStorage.setItem(QUEUE_KEY, queueId);

  const results = h('div', { class: 'results', 'aria-busy': 'false' });
  const pager = createListPager(ctx, results, {
    url: (cursor) => withQuery('/v1/subscriptions', { queue_id: queueId, limit, cursor }),
    render: table,
    empty: 'No subscriptions of this token in this queue.',
  });
  ctx.main.append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'list-title' },
      h('h2', { id: 'list-title' }, 'Queue ', h('code', { class: 'id' }, queueId)),
      h('p', { class: 'help' }, "Newest first. Only this token's subscriptions are listed; paging is done by the server."),
      results,
      pager.controls,
    ),
  );
  await pager.first();
}
