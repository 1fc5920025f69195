/**
 * @module
 * How far one materialization step may go (spec/rules.md#s2-6, #s2-16): matching results become
 * deliveries in sequence order, never beyond `max_pending`, and the cursor moves past every result
 * it has considered — the ones it materialized and the non-matching ones in between — and no
 * further.
 */

export interface MaterializationInput {
  readonly cursor: bigint;
  /** The committed head when the candidates were read. */
  readonly head: bigint;
  readonly pendingCount: number;
  readonly maxPending: number;
  /** Matching results after `cursor` up to `head`, ascending, at most `limit` of them. */
  readonly candidates: readonly bigint[];
  readonly limit: number;
}

export interface MaterializationPlan {
  /** How many of the candidates, from the first, become deliveries. */
  readonly take: number;
  readonly cursor: bigint;
}

/**
 * How many matching results one step reads: the room below `max_pending`, at most `batch`. With no
 * room it still reads one, so the cursor can pass over the results that do not match, up to the
 * next one that does.
 */
export function materializationReadLimit(state: { readonly pendingCount: number; readonly maxPending: number }, batch: number): number {
  const room = Math.max(0, state.maxPending - state.pendingCount);
  return room === 0 ? 1 : Math.min(room, batch);
}

export function planMaterialization(input: MaterializationInput): MaterializationPlan {
  const room = Math.max(0, input.maxPending - input.pendingCount);
  const take = Math.min(room, input.candidates.length);
  if (take < input.candidates.length) {
    // Stop just before the first matching result that did not fit.
    const next = input.candidates[take]!;
    return { take, cursor: next - 1n > input.cursor ? next - 1n : input.cursor };
  }
  // Everything read was taken: a short read means nothing else matches up to the head.
  const exhausted = input.candidates.length < input.limit;
  const last = input.candidates[input.candidates.length - 1];
  return { take, cursor: exhausted ? maxBig(input.head, input.cursor) : (last ?? input.cursor) };
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
