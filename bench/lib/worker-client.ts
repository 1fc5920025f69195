/**
 * @module
 * The parent side of a benchmark worker (`bench/worker.ts`): a child Node process that runs
 * consumers, publishers or load generators on its own core, driven by request/response messages
 * over the IPC channel. Every request has a deadline.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { withTimeout } from './util.ts';

const WORKER = fileURLToPath(new URL('../worker.ts', import.meta.url));

export type Reply = Record<string, unknown>;

export class WorkerClient {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  /** The latest progress count the worker pushed (ACKs confirmed, requests done, ...). */
  progress = 0;
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly name: string,
  ) {
    child.on('message', (message: Reply) => {
      if (message.type === 'progress') {
        this.progress = Number(message.count);
        return;
      }
      const waiter = this.pending.get(Number(message.id));
      if (!waiter) return;
      this.pending.delete(Number(message.id));
      if (message.error) waiter.reject(new Error(`${name}: ${String(message.error)}`));
      else waiter.resolve(message);
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      for (const waiter of this.pending.values()) waiter.reject(new Error(`${name} exited (${code ?? signal})`));
      this.pending.clear();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  static async start(name: string): Promise<WorkerClient> {
    const child = fork(WORKER, [name], {
      execArgv: ['--import', 'tsx', '--conditions=@orbit/source'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const client = new WorkerClient(child, name);
    await client.request({ op: 'ping' }, 30_000);
    return client;
  }

  request(message: Reply, timeoutMs = 30_000): Promise<Reply> {
    if (this.exited) return Promise.reject(new Error(`${this.name} has exited`));
    const id = this.nextId++;
    const reply = new Promise<Reply>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.child.send({ ...message, id });
    return withTimeout(reply, timeoutMs, `${this.name} ${String(message.op)}`).finally(() => this.pending.delete(id));
  }

  /** Fire-and-forget message (e.g. relaying ACK progress to a publisher). */
  tell(message: Reply): void {
    if (!this.exited && this.child.connected) this.child.send(message);
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      await this.request({ op: 'exit' }, 5_000);
    } catch {
      // fall through to a kill
    }
    try {
      await withTimeout(gone, 5_000, `${this.name} exit`);
    } catch {
      this.child.kill('SIGKILL');
    }
  }
}
