/**
 * @module
 * Opaque, tamper-evident pagination cursors (spec/README.md, Pagination). A cursor carries the position of
 * the last item and the scope it was issued for, signed with HMAC-SHA256 under a deployment secret
 * that every node reads from the database. A cursor from another scope is refused. The signature
 * is compared in constant time, so the time a refusal takes says nothing about how much of a
 * forged signature was right.
 */
import { createHmac } from 'node:crypto';
import { decodeBase64url, encodeBase64url } from '@orbit/spec/codec';
import { digestsEqual } from '../crypto.ts';
import { PATTERNS } from '@orbit/generated';

export interface PagePosition {
  readonly createdAt: number;
  readonly id: string;
}

export class PageCursors {
  constructor(private readonly secret: string) {}

  encode(scope: string, position: PagePosition): string {
    const payload = encodeBase64url(Buffer.from(JSON.stringify([position.createdAt, position.id]), 'utf8'));
    return `${payload}.${this.sign(scope, payload)}`;
  }

  /** Returns the position, or `null` when the cursor is malformed, forged or from another scope. */
  decode(scope: string, cursor: string): PagePosition | null {
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 512) return null;
    const payload = cursor.slice(0, dot);
    const signature = cursor.slice(dot + 1);
    if (!digestsEqual(signature, this.sign(scope, payload))) return null;
    try {
      const value: unknown = JSON.parse(Buffer.from(decodeBase64url(payload)).toString('utf8'));
      if (!Array.isArray(value) || value.length !== 2) return null;
      const [createdAt, id] = value as [unknown, unknown];
      if (typeof createdAt !== 'number' || !Number.isSafeInteger(createdAt) || typeof id !== 'string' || !PATTERNS.id.test(id)) return null;
      return { createdAt, id };
    } catch {
      return null;
    }
  }

  private sign(scope: string, payload: string): string {
    return encodeBase64url(createHmac('sha256', this.secret).update(scope).update('\n').update(payload).digest());
  }
}
