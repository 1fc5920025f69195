/**
 * @module
 * A connection's read queue (spec/README.md "Event connections": read queue 4). `ws` parses every
 * frame of a TCP chunk before `pause()` takes effect, so pausing the socket alone is no bound: one
 * write of 400 pings reached 250 handlers at once. Frames wait here in arrival order; at most
 * `limit` are in processing, and only while `canStart` says the connection can take another
 * (its write queue has room for the reply). The socket is paused while frames wait.
 */
export class ReadQueue<T> {
  private readonly waiting: T[] = [];
  private active = 0;
  private stopped = false;

  constructor(
    private readonly limit: number,
    private readonly handle: (item: T) => Promise<void>,
    private readonly canStart: () => boolean = () => true,
    /** Called with `true` when frames start waiting, `false` when none wait any more. */
    private readonly backlog: (waiting: boolean) => void = () => {},
  ) {}

  /** Frames in processing now. */
  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  push(item: T): void {
    if (this.stopped) return;
    this.waiting.push(item);
    this.pump();
    if (this.waiting.length > 0) this.backlog(true);
  }

  /** Starts what may start now; call it when `canStart` may have changed (a write finished). */
  pump(): void {
    while (!this.stopped && this.active < this.limit && this.waiting.length > 0 && this.canStart()) {
      const item = this.waiting.shift()!;
      this.active++;
      void this.handle(item).finally(() => {
        this.active--;
        // The next frame starts after pending I/O: a burst on one connection must not keep the
        // event loop from every other connection until it is drained.
        setImmediate(() => this.pump());
      });
    }
    if (this.waiting.length === 0) this.backlog(false);
  }

  /** Drops what waits and starts nothing more (the connection is closing). */
  stop(): void {
    this.stopped = true;
    this.waiting.length = 0;
  }
}
