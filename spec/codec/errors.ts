/**
 * @module errors
 * Error classes thrown by the strict codec. Every codec failure is a {@link CodecError};
 * strict JSON parsing failures are the more specific {@link StrictJsonError}, which says
 * why (`reason`) and where (`offset`, `path`) the text was refused.
 */

/** Base class of every error thrown by `@orbit/spec/codec` for bad input. */
export class CodecError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CodecError';
  }
}

/** Why a JSON text was refused by `parseStrict`. */
export type StrictJsonErrorReason = 'syntax' | 'duplicate_key' | 'depth';

/**
 * A JSON text was refused by `parseStrict` (or by the `RawJson` constructor).
 *
 * - `reason`: `'syntax'` when the text is not RFC 8259 JSON (exactly the texts `JSON.parse`
 *   rejects), `'duplicate_key'` when an object repeats a member name (compared after
 *   unescaping), `'depth'` when containers nest deeper than the allowed depth.
 * - `offset`: UTF-16 code unit index in the text (`text.length` for an unexpected end).
 * - `path`: JSON Pointer (RFC 6901) of the object holding the duplicate key, of the container
 *   that is too deep, or of the innermost open container at a syntax error (`''` = top level).
 * - `key`: the duplicated member name (unescaped), only for `'duplicate_key'`.
 *
 * A text with a syntax error is always reported as `'syntax'`, even when a duplicate key or
 * a too-deep container comes earlier; otherwise the first violation in document order wins.
 */
export class StrictJsonError extends CodecError {
  readonly reason: StrictJsonErrorReason;
  readonly offset: number;
  readonly path: string;
  readonly key: string | undefined;

  constructor(reason: StrictJsonErrorReason, message: string, offset: number, path: string, key?: string) {
    super(message);
    this.name = 'StrictJsonError';
    this.reason = reason;
    this.offset = offset;
    this.path = path;
    this.key = key;
  }
}
