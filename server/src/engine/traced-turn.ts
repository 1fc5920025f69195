/**
 * @module
 * A turn's span (docs/operations.md, Tracing): one span per transaction of the delivery engine,
 * named for what it did (`orbit.ack`, `orbit.claim`, or `orbit.ack_and_claim` when one transaction
 * did both), with the subscription, delivery and event ids as attributes, and a link to the trace
 * context of each event it leased, so the publish's trace reaches its deliveries. Only called when
 * `tracingOn()`; the engine runs the turn itself untouched.
 */
import type { Link } from '@opentelemetry/api';
import { ATTR, spanContextOf, traced } from '../tracing.ts';
import type { TurnOutcome, TurnRequest } from './turn.ts';

export function tracedTurn(request: TurnRequest, run: () => Promise<TurnOutcome>): Promise<TurnOutcome> {
  const acking = request.acks.length > 0;
  const claiming = request.sessions.length > 0;
  const name = acking && claiming ? 'orbit.ack_and_claim' : acking ? 'orbit.ack' : 'orbit.claim';
  return traced(
    name,
    {
      attributes: {
        [ATTR.subscription]: request.subscriptionId,
        'orbit.ack.delivery_ids': request.acks.map((a) => a.deliveryId),
      },
    },
    () => run(),
    (span, outcome) => {
      span.setAttributes({
        'orbit.ack.event_ids': outcome.acks.flatMap((a) => (a.kind === 'lease_lost' ? [] : [a.eventId])),
        'orbit.ack.outcomes': outcome.acks.map((a) => a.kind),
        [ATTR.delivery]: outcome.leased.map((l) => l.delivery.id),
        [ATTR.event]: outcome.leased.map((l) => l.event.id),
      });
      for (const { event, delivery } of outcome.leased) {
        const spanContext = event.traceparent === null ? undefined : spanContextOf(event);
        if (spanContext)
          span.addLink({ context: spanContext, attributes: { [ATTR.delivery]: delivery.id, [ATTR.event]: event.id } } satisfies Link);
      }
    },
  );
}
