import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { installShutdown } from './shutdown.ts';

function harness(close: () => Promise<void>, timeoutMs = 1_000) {
  const source = new EventEmitter();
  const exits: number[] = [];
  const messages: string[] = [];
  installShutdown({ close, timeoutMs, log: (_l, m) => messages.push(m), exit: (code) => exits.push(code), source: source as never });
  return { source, exits, messages };
}

describe('installShutdown', () => {
  it('closes gracefully on the first signal and exits 0', async () => {
    let closed = 0;
    const { source, exits } = harness(async () => void closed++);
    source.emit('SIGTERM', 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toBe(1);
    expect(exits).toEqual([0]);
  });

  it('exits 1 at once on a second signal, and 1 when the bound passes', async () => {
    const { source, exits, messages } = harness(() => new Promise(() => {}), 50);
    source.emit('SIGINT', 'SIGINT');
    source.emit('SIGTERM', 'SIGTERM');
    expect(exits).toEqual([1]);
    expect(messages).toContain('second signal: exiting at once');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(exits).toEqual([1, 1]);
    expect(messages).toContain('shutdown did not finish in time; exiting');
  });
});
