// One delivery: its state and attempt counters, a manual retry when EXPIRED, and its event with the
// snapshot. `result` and `details` are shown as the raw JSON text sliced out of the response body,
// so a 30-digit integer or a 0.1000000000000000055511151231257827 is shown exactly as stored.

import { apiRequest, idSegment } from '../api.js';
import { breadcrumbs, fields, h, id, loading, pageHeading, stateBadge, time } from '../dom.js';
import { reindent, rawValueAt } from '../json-raw.js';
import { perform, reasonField } from './actions.js';

function rawBlock(name, raw, idValue) {
  if (raw === undefined) return h('p', null, `No ${name} in this event.`);
  const pre = h('pre', { class: 'raw-json', id: idValue, tabindex: '0', 'aria-label': `${name}, raw JSON text` }, raw);
  const toggleId = `${idValue}-indent`;
  const toggle = h('input', {
    type: 'checkbox',
    id: toggleId,
    onchange: () => {
      pre.textContent = toggle.checked ? reindent(raw) : raw;
    },
  });
  return h(
    'div',
    null,
    h(
      'div',
      { class: 'form-check' },
      toggle,
      h('label', { for: toggleId }, 'Indent (whitespace only; every number and string stays as received)'),
    ),
    pre,
    h('p', { class: 'help' }, `${raw.length} characters, shown exactly as received.`),
  );
}

function retryForm(ctx, subscriptionId, delivery) {
  if (delivery.state !== 'EXPIRED') {
    return h('p', null, `Only an EXPIRED delivery can be retried by hand; this one is ${delivery.state}.`);
  }
  const attempts = h('input', {
    type: 'number',
    id: 'additional-attempts',
    name: 'additional_attempts',
    min: '1',
    max: '100',
    step: '1',
    value: '1',
    required: true,
    inputmode: 'numeric',
    'aria-describedby': 'attempts-help',
  });
  const reason = reasonField('retry-reason', 'Reason to retry', 'receiver persistence failure repaired');
  const outlet = h('div', { class: 'outlet' });
  const submit = h('button', { type: 'submit', class: 'button', id: 'retry-submit' }, 'Retry delivery');
  return h(
    'form',
    {
      class: 'form action-form',
      novalidate: true,
      onsubmit: (event) => {
        event.preventDefault();
        const count = Number(attempts.value);
        const text = reason.input.value.trim();
        if (!Number.isInteger(count) || count < 1 || count > 100) {
          attempts.setAttribute('aria-invalid', 'true');
          attempts.focus();
          return;
        }
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
            path: `/v1/subscriptions/${subscriptionId}/deliveries/${delivery.id}:retry`,
            body: { expected_revision: delivery.revision, reason: text, additional_attempts: count },
            label: `Retry delivery ${delivery.id} (+${count}, revision ${delivery.revision})`,
          },
          (answer) =>
            ctx.reload(
              `Delivery is now ${answer.data.delivery.state} with an attempt budget of ${answer.data.delivery.attempt_budget}${answer.data.deduplicated ? ' (the server had already applied this operation)' : ''}.`,
            ),
          submit,
        );
      },
    },
    h(
      'div',
      { class: 'form-row form-row-narrow' },
      h('label', { for: 'additional-attempts' }, 'Additional attempts'),
      attempts,
      h('p', { id: 'attempts-help', class: 'help' }, '1–100. Added to the budget; attempts already used are not reset.'),
    ),
    reason.row,
    h('div', { class: 'actions' }, submit),
    outlet,
  );
}

export async function deliveryView(ctx, subscriptionId, deliveryId) {
  const heading = pageHeading('Delivery');
  const body = h('div', null, loading());
  ctx.main.append(
    breadcrumbs([
      ['Queues', '#/queues'],
      ['Subscription', `#/subscriptions/${subscriptionId}`],
      ['Delivery', ''],
    ]),
    heading,
    body,
  );
  idSegment(subscriptionId);
  idSegment(deliveryId);
  const { data, text } = await apiRequest('GET', `/v1/subscriptions/${subscriptionId}/deliveries/${deliveryId}`, { signal: ctx.signal });
  const { delivery, event } = data;
  const snapshot = event.snapshot;
  const rawResult = rawValueAt(text, ['data', 'event', 'snapshot', 'result']);
  const rawDetails = rawValueAt(text, ['data', 'event', 'details']);
  heading.replaceChildren(`Delivery of sequence ${delivery.sequence} `, stateBadge(delivery.state));
  const remaining = delivery.attempt_budget - delivery.attempts;

  body.replaceChildren(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'delivery-title' },
      h('h2', { id: 'delivery-title' }, 'Delivery'),
      fields([
        ['id', id(delivery.id)],
        ['subscription_id', h('a', { href: `#/subscriptions/${delivery.subscription_id}` }, id(delivery.subscription_id))],
        ['event_id', id(delivery.event_id)],
        ['sequence', delivery.sequence],
        ['state', stateBadge(delivery.state)],
        ['revision', delivery.revision],
        ['created_at', time(delivery.created_at)],
        ['available_at', time(delivery.available_at)],
        ['lease_until', delivery.lease_until ? time(delivery.lease_until) : undefined],
        ['acknowledged_at', delivery.acknowledged_at ? time(delivery.acknowledged_at) : undefined],
      ]),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'attempts-title' },
      h('h2', { id: 'attempts-title' }, 'Attempts'),
      fields([
        ['attempts', String(delivery.attempts)],
        ['attempt_budget', String(delivery.attempt_budget)],
        ['remaining', String(remaining)],
        ['lease_epoch (claims so far)', delivery.lease_epoch],
      ]),
      h(
        'p',
        { class: 'help' },
        'The API keeps counters, not a log of single attempts: every claim increments lease_epoch and attempts; a lease that runs out goes back to PENDING while attempts < attempt_budget, else to EXPIRED.',
      ),
      h('h3', null, 'Manual retry'),
      retryForm(ctx, subscriptionId, delivery),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'event-title' },
      h('h2', { id: 'event-title' }, 'Event'),
      fields([
        ['id', id(event.id)],
        ['sequence', event.sequence],
        ['type', event.type],
        ['aggregate_kind', event.aggregate_kind],
        ['aggregate_id', id(event.aggregate_id)],
        ['aggregate_revision', event.aggregate_revision],
        ['occurred_at', time(event.occurred_at)],
      ]),
      h('h3', null, 'Snapshot'),
      fields([
        ['schema_version', String(snapshot.schema_version)],
        ['task_id', id(snapshot.task_id)],
        ['queue_id', id(snapshot.queue_id)],
        ['state', snapshot.state],
        ['revision', snapshot.revision],
        ['effect_uncertain', String(snapshot.effect_uncertain)],
        ['current_attempt_id', snapshot.current_attempt_id ? id(snapshot.current_attempt_id) : undefined],
      ]),
      h('h3', null, 'Result (raw JSON text)'),
      rawBlock('result', rawResult, 'result-raw'),
      h('h3', null, 'Details (raw JSON text)'),
      rawBlock('details', rawDetails, 'details-raw'),
    ),
  );
}
