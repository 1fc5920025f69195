/**
 * @module
 * Evidence: what a case sent and received (HTTP exchanges, WebSocket frames and closes, publisher
 * runs, notes), in order, with times relative to the start of the case. Tokens are redacted;
 * long texts are cut. Reports show it next to the failure.
 */

export type Evidence =
  | {
      readonly kind: 'http';
      readonly at: number;
      readonly method: string;
      readonly target: string;
      readonly requestHeaders: Record<string, string>;
      readonly requestBody?: string;
      readonly status?: number;
      readonly responseHeaders?: Record<string, string>;
      readonly responseBody?: string;
      readonly error?: string;
      readonly durationMs: number;
    }
  | {
      readonly kind: 'ws-open';
      readonly at: number;
      readonly conn: number;
      readonly target: string;
      readonly requestHeaders: Record<string, string>;
      readonly status: number;
      readonly responseHeaders: Record<string, string>;
      readonly body?: string;
    }
  | {
      readonly kind: 'ws-frame';
      readonly at: number;
      readonly conn: number;
      readonly direction: 'sent' | 'received';
      readonly text: string;
      readonly binary: boolean;
    }
  | { readonly kind: 'ws-close'; readonly at: number; readonly conn: number; readonly code: number; readonly reason: string }
  | {
      readonly kind: 'publish';
      readonly at: number;
      readonly method: string;
      readonly request: string;
      readonly response?: string;
      readonly error?: string;
    }
  | { readonly kind: 'note'; readonly at: number; readonly text: string };

/** Distributes Omit over the union members. */
export type EvidenceInput = Evidence extends infer E ? (E extends Evidence ? Omit<E, 'at'> : never) : never;

const MAX_TEXT = 2_000;
const MAX_ITEMS = 400;

export function truncate(text: string, max = MAX_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

export class EvidenceLog {
  readonly items: Evidence[] = [];
  dropped = 0;
  private readonly started = Date.now();
  private secrets: Array<[string, string]> = [];

  /** Registers a secret (a token) and the label that replaces it in every recorded text. */
  redact(secret: string, label: string): void {
    if (secret) this.secrets.push([secret, label]);
  }

  clean(text: string): string {
    let out = text;
    for (const [secret, label] of this.secrets) out = out.split(secret).join(label);
    return truncate(out);
  }

  cleanHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = this.clean(Array.isArray(v) ? v.join(', ') : v);
    return out;
  }

  elapsed(): number {
    return Date.now() - this.started;
  }

  add(entry: EvidenceInput): void {
    if (this.items.length >= MAX_ITEMS) {
      this.dropped++;
      return;
    }
    this.items.push({ ...entry, at: this.elapsed() } as Evidence);
  }

  note(text: string): void {
    this.add({ kind: 'note', text: this.clean(text) });
  }
}
