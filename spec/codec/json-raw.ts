/**
 * @module json-raw
 * `RawJson`: a JSON value kept as its exact source text, so that numbers beyond double
 * precision (a 30-digit integer, `0.1000000000000000055511151231257827`) and the original
 * spelling survive a parse/serialize round trip byte for byte. `parseStrict` produces them
 * for the `raw` paths it is given; `stringify` emits their text verbatim.
 */

import { MAX_DEPTH_LIMIT, parseChecked } from './json-check.ts';

const RAW_JSON_BRAND: unique symbol = Symbol.for('orbit.codec.RawJson');

/** A strict JSON text standing for a value. Instances are frozen. */
export class RawJson {
  /** The exact JSON text of the value. */
  readonly text: string;

  /**
   * Wraps `text`, which must be strict JSON (no duplicate keys, nested at most `MAX_DEPTH_LIMIT` levels);
   * throws `StrictJsonError` otherwise, so `stringify` can never emit invalid JSON.
   */
  constructor(text: string) {
    if (typeof text !== 'string') throw new TypeError('RawJson text must be a string');
    parseChecked(text, MAX_DEPTH_LIMIT);
    this.text = text;
    Object.freeze(this);
  }

  /** Always `true`; lets `isRawJson` recognise instances from another copy of this module. */
  declare readonly [RAW_JSON_BRAND]: true;
}
Object.defineProperty(RawJson.prototype, RAW_JSON_BRAND, { value: true });
Object.freeze(RawJson.prototype);

/** Whether `value` is a `RawJson` (also one created by another copy of this module). */
export function isRawJson(value: unknown): value is RawJson {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { [RAW_JSON_BRAND]?: unknown })[RAW_JSON_BRAND] === true &&
    typeof (value as { text?: unknown }).text === 'string'
  );
}

/** Internal: wraps a slice that the caller has already validated as strict JSON. */
export function trustedRawJson(text: string): RawJson {
  const raw = Object.create(RawJson.prototype) as { text: string };
  raw.text = text;
  return Object.freeze(raw) as RawJson;
}
