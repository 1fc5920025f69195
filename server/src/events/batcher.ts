/**
 * @module
 * Group commit: requests that arrive while a group is being committed wait and go together in the
 * next group, so one transaction (one durable commit) serves many of them while each caller still
 * waits for its own commit. With no load a request goes alone and at once; nothing waits for a
 * timer.
 */

export class Batcher<Request, Result> {
  private queue: Array<{ request: Request; resolve: (r: Result) => void; reject: (e: unknown) => void }> = [];
  private running = false;

  constructor(
    private readonly commit: (requests: readonly Request[]) => Promise<Result[]>,
    private readonly maxGroup = 64,
  ) {}

  submit(request: Request): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroup);
      try {
        const results = await this.commit(group.map((g) => g.request));
        group.forEach((g, i) => g.resolve(results[i]!));
      } catch (error) {
        for (const g of group) g.reject(error);
      }
    }
    this.running = false;
  }
}
