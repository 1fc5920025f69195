// One subscription: configuration and its history, its connected sessions on every node,
// pause/resume, retire, and its deliveries filtered by state.

import { apiRequest, idSegment, withQuery } from '../api.js';
import { badge, breadcrumbs, clear, dataTable, fields, h, id, loading, pageHeading, stateBadge, time } from '../dom.js';
import { perform, reasonField } from './actions.js';
import { historySection } from './history.js';
import { sessionsSection } from './sessions.js';
import { createListPager } from './paging.js';

export const STATES = ['PENDING', 'LEASED', 'ACKED', 'EXPIRED'];
const PAGE_SIZES = ['20', '50', '100'];

function statusBadges(sub) {
  if (sub.retired_at) return badge('Retired', 'muted');
  return sub.enabled ? badge('Enabled', 'ok') : badge('Paused', 'warn');
}

function configuration(sub) {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'config-title' },
    h('h2', { id: 'config-title' }, 'Configuration'),
    fields([
      ['id', id(sub.id)],
      ['queue_id', h('a', { href: `#/queues/${sub.queue_id}` }, id(sub.queue_id))],
      ['credential_id', id(sub.credential_id)],
      ['revision', sub.revision],
      ['enabled', sub.enabled ? 'true' : 'false'],
      ['types', sub.types.join(', ')],
      ['cursor_sequence', sub.cursor_sequence],
      ['pending_count / max_pending', `${sub.pending_count} / ${sub.max_pending}`],
      ['max_attempts', String(sub.max_attempts)],
      ['created_at', time(sub.created_at)],
      ['updated_at', time(sub.updated_at)],
      ['retired_at', sub.retired_at ? time(sub.retired_at) : undefined],
      ['retired_sequence', sub.retired_sequence],
    ]),
  );
}

function actions(ctx, sub) {
  const section = h('section', { class: 'card', 'aria-labelledby': 'actions-title' }, h('h2', { id: 'actions-title' }, 'Actions'));
  if (sub.retired_at) {
    section.append(
      h(
        'p',
        null,
        `Retired at ${sub.retired_at} (sequence ${sub.retired_sequence}). A retired subscription stays readable but can never be resumed, configured or consumed again.`,
      ),
    );
    return section;
  }
  const pausing = sub.enabled;
  const verb = pausing ? 'Pause' : 'Resume';
  const reason = reasonField('configure-reason', `Reason to ${verb.toLowerCase()}`, pausing ? 'receiver maintenance' : 'receiver repaired');
  const outlet = h('div', { class: 'outlet' });
  const submit = h('button', { type: 'submit', class: 'button', id: 'configure-submit' }, `${verb} subscription`);
  const configure = h(
    'form',
    {
      class: 'form action-form',
      novalidate: true,
      'aria-labelledby': 'configure-title',
      onsubmit: (event) => {
        event.preventDefault();
        const text = reason.input.value.trim();
        if (!text) {
          reason.input.setAttribute('aria-invalid', 'true');
          reason.input.focus();
          return;
        }
        perform(
          ctx,
          outlet,
          {
            method: 'POST',
            path: `/v1/subscriptions/${sub.id}:configure`,
            body: { expected_revision: sub.revision, enabled: !pausing, reason: text },
            label: `${verb} ${sub.name} (revision ${sub.revision})`,
          },
          (answer) =>
            ctx.reload(
              `${pausing ? 'Paused' : 'Resumed'} ${answer.data.subscription.name}: revision ${answer.data.subscription.revision}${answer.data.deduplicated ? ' (the server had already applied this operation)' : ''}.`,
            ),
          submit,
        );
      },
    },
    h('h3', { id: 'configure-title' }, pausing ? 'Pause' : 'Resume'),
    h(
      'p',
      { class: 'help' },
      pausing
        ? 'Pausing stops new materialization and claims. Existing deliveries and leases stay; consumers can still acknowledge.'
        : 'Resuming lets consumers claim again.',
      ` Sent with expected_revision ${sub.revision}.`,
    ),
    reason.row,
    h('div', { class: 'actions' }, submit),
    outlet,
  );

  const retireReason = reasonField('retire-reason', 'Reason to retire', 'no longer needed');
  const confirm = h('input', { type: 'checkbox', id: 'retire-confirm', required: true });
  const retireOutlet = h('div', { class: 'outlet' });
  const retireSubmit = h('button', { type: 'submit', class: 'button button-danger' }, 'Retire subscription');
  const retire = h(
    'form',
    {
      class: 'form action-form',
      novalidate: true,
      'aria-labelledby': 'retire-title',
      onsubmit: (event) => {
        event.preventDefault();
        const text = retireReason.input.value.trim();
        if (!text || !confirm.checked) {
          (text ? confirm : retireReason.input).focus();
          clear(retireOutlet).append(
            h('p', { class: 'field-error', role: 'alert' }, !text ? 'A reason is required.' : 'Confirm that retiring is permanent.'),
          );
          return;
        }
        perform(
          ctx,
          retireOutlet,
          {
            method: 'POST',
            path: `/v1/subscriptions/${sub.id}:retire`,
            body: { expected_revision: sub.revision, reason: text },
            label: `Retire ${sub.name} (revision ${sub.revision})`,
          },
          (answer) =>
            ctx.reload(
              `Retired ${answer.data.subscription.name}${answer.data.deduplicated ? ' (the server had already applied this operation)' : ''}.`,
            ),
          retireSubmit,
        );
      },
    },
    h('h3', { id: 'retire-title' }, 'Retire'),
    h(
      'p',
      { class: 'help' },
      'Permanent: frees the name and the namespace slot; refused (STATE_CONFLICT) while any delivery is PENDING, LEASED or EXPIRED or a matching result is not yet materialized.',
    ),
    retireReason.row,
    h(
      'div',
      { class: 'form-check' },
      confirm,
      h('label', { for: 'retire-confirm' }, 'I understand that a retired subscription can never be resumed.'),
    ),
    h('div', { class: 'actions' }, retireSubmit),
    retireOutlet,
  );

  section.append(h('div', { class: 'action-grid' }, configure, retire));
  return section;
}

export function deliveriesTable(subscriptionId, items) {
  const columns = [
    'Sequence',
    'State',
    'Attempts / budget',
    'Lease epoch',
    'Created',
    'Available / lease until / acknowledged',
    'Delivery',
  ];
  return dataTable('deliveries-table', 'Deliveries', columns, items, (d) =>
    h(
      'tr',
      { dataset: { deliveryId: d.id, state: d.state } },
      h('td', { 'data-label': columns[0], class: 'num' }, d.sequence),
      h('td', { 'data-label': columns[1] }, stateBadge(d.state)),
      h('td', { 'data-label': columns[2], class: 'num' }, `${d.attempts} / ${d.attempt_budget}`),
      h('td', { 'data-label': columns[3], class: 'num' }, d.lease_epoch),
      h('td', { 'data-label': columns[4] }, time(d.created_at)),
      h(
        'td',
        { 'data-label': columns[5] },
        d.lease_until
          ? h('span', null, 'lease until ', time(d.lease_until))
          : d.acknowledged_at
            ? h('span', null, 'acked ', time(d.acknowledged_at))
            : h('span', null, 'available ', time(d.available_at)),
      ),
      h(
        'td',
        { 'data-label': columns[6] },
        h(
          'a',
          { href: `#/subscriptions/${subscriptionId}/deliveries/${d.id}`, 'aria-label': `Delivery ${d.id}, sequence ${d.sequence}` },
          h('code', { class: 'id' }, `${d.id.slice(0, 12)}…`),
        ),
      ),
    ),
  );
}

function deliveries(ctx, sub) {
  const state = STATES.includes(ctx.params.get('state')) ? ctx.params.get('state') : '';
  const limit = PAGE_SIZES.includes(ctx.params.get('limit')) ? ctx.params.get('limit') : '20';
  const stateSelect = h(
    'select',
    { id: 'state-filter', name: 'state' },
    h('option', { value: '', selected: state === '' }, 'All states'),
    STATES.map((s) => h('option', { value: s, selected: s === state }, s)),
  );
  const limitSelect = h(
    'select',
    { id: 'delivery-page-size', name: 'limit' },
    PAGE_SIZES.map((n) => h('option', { value: n, selected: n === limit }, n)),
  );
  const navigate = () => {
    const query = new URLSearchParams();
    if (stateSelect.value) query.set('state', stateSelect.value);
    if (limitSelect.value !== '20') query.set('limit', limitSelect.value);
    const q = query.toString();
    location.hash = `#/subscriptions/${sub.id}${q ? `?${q}` : ''}`;
  };
  const filter = h(
    'form',
    {
      class: 'form form-inline',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        navigate();
      },
    },
    h('div', { class: 'form-row form-row-narrow' }, h('label', { for: 'state-filter' }, 'State'), stateSelect),
    h('div', { class: 'form-row form-row-narrow' }, h('label', { for: 'delivery-page-size' }, 'Per page'), limitSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'button' }, 'Show deliveries')),
  );

  const results = h('div', { class: 'results' });
  const pager = createListPager(ctx, results, {
    url: (cursor) => withQuery(`/v1/subscriptions/${sub.id}/deliveries`, { limit, cursor, state }),
    render: (items) => deliveriesTable(sub.id, items),
    empty: state ? `No ${state} deliveries.` : 'No deliveries yet (results not yet materialized have none).',
  });
  const section = h(
    'section',
    { class: 'card', 'aria-labelledby': 'deliveries-title' },
    h('h2', { id: 'deliveries-title' }, state ? `Deliveries: ${state}` : 'Deliveries'),
    h(
      'p',
      { class: 'help' },
      'Newest first, paged by the server. A list is an operational view, not a consistent snapshot. ',
      h('a', { href: `#/subscriptions/${sub.id}/backlog` }, 'Backlog chart'),
    ),
    filter,
    results,
    pager.controls,
  );
  return { section, load: () => pager.first() };
}

export async function subscriptionView(ctx, subscriptionId) {
  const heading = pageHeading('Subscription');
  const crumbs = breadcrumbs([
    ['Queues', '#/queues'],
    ['Subscription', ''],
  ]);
  const body = h('div', null, loading());
  ctx.main.append(crumbs, heading, body);
  idSegment(subscriptionId);
  const { data: sub } = await apiRequest('GET', `/v1/subscriptions/${subscriptionId}`, { signal: ctx.signal });
  heading.replaceChildren(`Subscription ${sub.name} `, statusBadges(sub));
  crumbs.replaceWith(
    breadcrumbs([
      ['Subscriptions', `#/queues/${sub.queue_id}`],
      [sub.name, ''],
    ]),
  );
  const list = deliveries(ctx, sub);
  const history = historySection(ctx, sub);
  const sessions = sessionsSection(ctx, sub);
  body.replaceChildren(configuration(sub), sessions.section, history.section, actions(ctx, sub), list.section);
  await Promise.all([sessions.load(), history.load(), list.load()]);
}
