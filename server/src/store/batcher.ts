/**
 * @module
 * Group commit: requests that arrive while a group is being committed wait and go together in the
 * next group, so one transaction (one durable commit) serves many of them while each caller still
 * waits for its own commit. With no load a request goes alone and at once; nothing waits for a
 * timer.
 */

export interface GroupLimits<Request> {
  /** Requests per group. */
  readonly maxGroup?: number;
  /** The size of a request (e.g. its bytes); a group stays within `maxWeight` unless it is one request. */
  readonly weigh?: (request: Request) => number;
  readonly maxWeight?: number;
}

export class Batcher<Request, Result> {
  private queue: Array<{ request: Request; resolve: (r: Result) => void; reject: (e: unknown) => void }> = [];
  private running = false;
  private readonly maxGroup: number;

  constructor(
    private readonly commit: (requests: readonly Request[]) => Promise<Result[]>,
    private readonly limits: GroupLimits<Request> = {},
  ) {
    this.maxGroup = limits.maxGroup ?? 64;
  }

  submit(request: Request): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, this.groupSize());
      try {
        const results = await this.commit(group.map((g) => g.request));
        for (const [i, g] of group.entries()) g.resolve(results[i]!);
      } catch (error) {
        for (const g of group) g.reject(error);
      }
    }
    this.running = false;
  }

  /** How many queued requests the next group takes: at least one, then within both limits. */
  private groupSize(): number {
    const { weigh, maxWeight } = this.limits;
    if (!weigh || maxWeight === undefined) return this.maxGroup;
    let size = 1;
    let weight = weigh(this.queue[0]!.request);
    while (size < this.maxGroup && size < this.queue.length) {
      weight += weigh(this.queue[size]!.request);
      if (weight > maxWeight) break;
      size++;
    }
    return size;
  }
}
