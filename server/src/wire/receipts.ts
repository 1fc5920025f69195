/**
 * @module
 * Idempotent writes on the wire (spec/README.md, Idempotency). The first answer to a key is its
 * envelope `data`, stored by the store with the write's effect (a publish's is rendered again from
 * its result); every answer adds `deduplicated`: `false` for the request that did the work, `true`
 * (with 200) for a repeat, which gets the first data byte for byte.
 */
import { stringify, trustedRawJson, type RawJson } from '@orbit/spec/codec';
import type { WriteKey, Written } from '../store/store.ts';
import { dataResponse } from './envelope.ts';

/** The key of a write whose first answer is `status` with `data(value)`. */
export function writeKey<T>(key: string, digest: string, status: number, data: (value: T) => object): WriteKey<T> {
  return writeKeyOfText(key, digest, status, (value) => stringify(data(value)));
}

/** `writeKey` for an answer whose `data` a renderer of its own writes as text (`text(value)`, a JSON object). */
export function writeKeyOfText<T>(key: string, digest: string, status: number, text: (value: T) => string): WriteKey<T> {
  return { key, digest, render: (value) => ({ status, body: text(value) }) };
}

/** The status and envelope `data` that answer an idempotent write. */
export function writtenAnswer(written: Written<unknown>): { status: number; data: RawJson } {
  const { status, body } = written.answer;
  // The stored text is the `data` object; close it with the flag.
  const data = trustedRawJson(`${body.slice(0, -1)},"deduplicated":${written.replayed}}`);
  return { status: written.replayed ? 200 : status, data };
}

/** The HTTP response to an idempotent write: `writtenAnswer` in the envelope. */
export function writtenResponse(requestId: string, written: Written<unknown>): Response {
  const { status, data } = writtenAnswer(written);
  return dataResponse(requestId, status, data);
}
