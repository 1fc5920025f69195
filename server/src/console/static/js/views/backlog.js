// The backlog picture of one subscription: deliveries counted by state (by paging the list with the
// state filter, up to a bound per state) and the gap between the committed head and the cursor.
// The API does not expose the committed head, so the highest sequence seen stands in for it: the
// deliveries counted here and the cursors (and retirement positions) of the queue's subscriptions
// this token can list. It is a lower bound, so the gap is one too.

import { apiRequest, idSegment, withQuery } from '../api.js';
import { barChart } from '../chart.js';
import { breadcrumbs, clear, fields, h, loading, pageHeading } from '../dom.js';
import { STATES } from './subscription.js';

const BOUNDS = ['500', '1000', '5000'];
const SUBSCRIPTION_PAGES = 10;
const maxBig = (a, b) => (BigInt(b) > BigInt(a) ? b : a);

async function countState(ctx, subscriptionId, state, bound, progress) {
  let count = 0;
  let highest = '0';
  let cursor;
  do {
    const { data } = await apiRequest('GET', withQuery(`/v1/subscriptions/${subscriptionId}/deliveries`, { state, limit: 100, cursor }), {
      signal: ctx.signal,
    });
    count += data.items.length;
    for (const d of data.items) highest = maxBig(highest, d.sequence);
    cursor = data.next_cursor;
    progress(`Counting ${state}: ${count}…`);
  } while (cursor && count < bound);
  return { count, truncated: Boolean(cursor), highest };
}

async function highestOfQueue(ctx, queueId) {
  let highest = '0';
  let cursor;
  let pages = 0;
  do {
    const { data } = await apiRequest('GET', withQuery('/v1/subscriptions', { queue_id: queueId, limit: 100, cursor }), {
      signal: ctx.signal,
    });
    for (const sub of data.items) {
      highest = maxBig(highest, sub.cursor_sequence);
      if (sub.retired_sequence) highest = maxBig(highest, sub.retired_sequence);
    }
    cursor = data.next_cursor;
    pages += 1;
  } while (cursor && pages < SUBSCRIPTION_PAGES);
  return highest;
}

function pictures(sub, counts, highest) {
  const display = (c) => `${c.truncated ? '≥ ' : ''}${c.count}`;
  const stateChart = barChart({
    idPrefix: 'backlog-chart',
    title: `Deliveries of ${sub.name} by state`,
    description: STATES.map((state) => `${state}: ${display(counts[state])}`).join('; '),
    rows: STATES.map((state) => ({
      label: state,
      display: display(counts[state]),
      segments: [{ value: counts[state].count, className: `bar-${state.toLowerCase()}`, label: `${state}: ${display(counts[state])}` }],
    })),
  });
  const cursor = BigInt(sub.cursor_sequence);
  const head = BigInt(highest);
  const gap = head > cursor ? head - cursor : 0n;
  const scanChart = barChart({
    idPrefix: 'scan-chart',
    title: `Scan position of ${sub.name}`,
    description: `Cursor ${sub.cursor_sequence}; highest sequence seen ${highest}; at least ${gap} sequences not yet scanned.`,
    scaleMax: Number(head > cursor ? head : cursor),
    scaleLabel: (head > cursor ? head : cursor).toString(),
    rows: [
      {
        label: 'cursor_sequence',
        display: sub.cursor_sequence,
        segments: [{ value: Number(cursor), className: 'bar-scanned', label: `scanned up to ${sub.cursor_sequence}` }],
      },
      {
        label: 'highest seen',
        display: highest,
        segments: [
          { value: Number(cursor < head ? cursor : head), className: 'bar-scanned', label: 'scanned' },
          { value: Number(gap), className: 'bar-gap', label: `gap: ${gap}` },
        ],
      },
      { label: 'gap (≥)', display: gap.toString(), segments: [{ value: Number(gap), className: 'bar-gap', label: `gap: ${gap}` }] },
    ],
  });
  const table = h(
    'table',
    { class: 'data-table compact', id: 'backlog-table' },
    h('caption', null, 'The numbers behind the charts'),
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Measure'), h('th', { scope: 'col' }, 'Value'))),
    h(
      'tbody',
      null,
      STATES.map((state) =>
        h(
          'tr',
          { dataset: { state } },
          h('th', { scope: 'row', 'data-label': 'Measure' }, `${state} deliveries`),
          h('td', { 'data-label': 'Value', class: 'num' }, display(counts[state])),
        ),
      ),
      h(
        'tr',
        null,
        h('th', { scope: 'row', 'data-label': 'Measure' }, 'cursor_sequence'),
        h('td', { 'data-label': 'Value', class: 'num' }, sub.cursor_sequence),
      ),
      h(
        'tr',
        null,
        h('th', { scope: 'row', 'data-label': 'Measure' }, 'Highest sequence seen'),
        h('td', { 'data-label': 'Value', class: 'num' }, highest),
      ),
      h(
        'tr',
        { dataset: { measure: 'gap' } },
        h('th', { scope: 'row', 'data-label': 'Measure' }, 'Gap, at least'),
        h('td', { 'data-label': 'Value', class: 'num' }, gap.toString()),
      ),
    ),
  );
  return { stateChart, scanChart, table, gap };
}

export async function backlogView(ctx, subscriptionId) {
  const heading = pageHeading('Backlog');
  const body = h('div', null, loading());
  ctx.main.append(
    breadcrumbs([
      ['Queues', '#/queues'],
      ['Subscription', `#/subscriptions/${subscriptionId}`],
      ['Backlog', ''],
    ]),
    heading,
    body,
  );
  idSegment(subscriptionId);
  const bound = BOUNDS.includes(ctx.params.get('bound')) ? Number(ctx.params.get('bound')) : 1000;
  const { data: sub } = await apiRequest('GET', `/v1/subscriptions/${subscriptionId}`, { signal: ctx.signal });
  heading.textContent = `Backlog of ${sub.name}`;

  const boundSelect = h(
    'select',
    { id: 'count-bound', name: 'bound' },
    BOUNDS.map((n) => h('option', { value: n, selected: Number(n) === bound }, n)),
  );
  const form = h(
    'form',
    {
      class: 'form form-inline',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        const target = `#/subscriptions/${sub.id}/backlog?bound=${boundSelect.value}`;
        if (location.hash === target) ctx.reload();
        else location.hash = target;
      },
    },
    h('div', { class: 'form-row form-row-narrow' }, h('label', { for: 'count-bound' }, 'Count up to (per state)'), boundSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button' }, 'Count again')),
  );
  const progress = h('p', { class: 'loading', 'aria-live': 'polite' }, 'Counting…');
  const out = h('div', { id: 'backlog-result', 'aria-busy': 'true' }, progress);
  body.replaceChildren(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'backlog-about' },
      h('h2', { id: 'backlog-about' }, 'How this is measured'),
      h(
        'p',
        null,
        `Each state is counted by paging the delivery list with its state filter, 100 at a time, up to ${bound} per state ("≥" marks a count that hit the bound). The committed head is not part of the API: the highest sequence seen (these deliveries, and the cursors of the queue's subscriptions this token can list) stands in for it, so the gap to the cursor is a lower bound and counts positions of the whole result log, not only results this subscription matches.`,
      ),
      fields([
        ['pending_count / max_pending', `${sub.pending_count} / ${sub.max_pending}`],
        ['enabled', sub.enabled ? 'true' : 'false (paused: no materialization or claims)'],
      ]),
      form,
    ),
    h('section', { class: 'card', 'aria-labelledby': 'backlog-picture' }, h('h2', { id: 'backlog-picture' }, 'Picture'), out),
  );

  const counts = {};
  for (const state of STATES)
    counts[state] = await countState(ctx, sub.id, state, bound, (text) => {
      progress.textContent = text;
    });
  progress.textContent = 'Reading the cursors of the queue…';
  let highest = await highestOfQueue(ctx, sub.queue_id);
  for (const state of STATES) highest = maxBig(highest, counts[state].highest);
  highest = maxBig(highest, sub.cursor_sequence);
  const { stateChart, scanChart, table, gap } = pictures(sub, counts, highest);
  clear(out).append(
    ...[
      h('h3', null, 'Deliveries by state'),
      stateChart,
      sub.pending_count >= sub.max_pending
        ? h(
            'p',
            { class: 'warning' },
            `pending_count has reached max_pending (${sub.max_pending}): nothing new is materialized until deliveries are acknowledged.`,
          )
        : null,
      h('h3', null, 'Scan position'),
      scanChart,
      h(
        'p',
        null,
        gap > 0n
          ? `At least ${gap} positions of the result log after the cursor are not yet scanned by this subscription.`
          : 'No gap is visible: the cursor is at the highest sequence seen.',
      ),
      table,
    ].filter(Boolean),
  );
  out.setAttribute('aria-busy', 'false');
}
