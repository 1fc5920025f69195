/**
 * @module
 * The audit trail of operator actions (create, pause, resume, retire, retry) with their reasons.
 */
import { stringify } from '@orbit/spec/codec';
import { newId } from '../crypto.ts';
import type { Sql } from './sql.ts';

export interface AuditEntry {
  readonly subscriptionId: string;
  readonly deliveryId?: string;
  readonly credentialId: string;
  readonly action: 'create' | 'pause' | 'resume' | 'retire' | 'retry';
  readonly reason: string;
  readonly revision: bigint;
  readonly detail: Record<string, unknown>;
  readonly now: number;
}

export async function audit(tx: Sql, entry: AuditEntry): Promise<void> {
  await tx.run(
    'INSERT INTO audit_log (id, subscription_id, delivery_id, credential_id, action, reason, revision, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [
      newId(),
      entry.subscriptionId,
      entry.deliveryId ?? null,
      entry.credentialId,
      entry.action,
      entry.reason,
      entry.revision.toString(),
      stringify(entry.detail),
      entry.now,
    ],
  );
}
