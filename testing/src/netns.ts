/**
 * @module
 * Real network stacks for the partition tests (Linux network namespaces and veth pairs from
 * iproute2; needs root). A `NetworkLab` makes namespaces and links under a random tag and removes
 * all of them in `remove()`. A partition is a link set down: its packets vanish, so neither side
 * sees a FIN or a reset, as when a cable or a switch port fails.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';

/** Runs `ip ARGS`; throws with its stderr when it fails. */
export function ip(...args: string[]): void {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ip ${args.join(' ')}: ${run.stderr}`);
}

/** Why this process cannot make namespaces, or null when it can. */
export function netnsMissing(): string | null {
  if (process.getuid?.() !== 0) return 'the partition tests need root (network namespaces and veth pairs)';
  if (spawnSync('ip', ['-V']).status !== 0) return 'ip (iproute2) is missing; install it with: apt-get install -y iproute2';
  return null;
}

/** One veth pair: `outer` stays in the host's namespace (cut it there), `inner` is in the namespace. */
export interface Link {
  readonly outer: string;
  readonly inner: string;
  /** The host side's address, and the namespace side's. */
  readonly host: string;
  readonly node: string;
}

export class NetworkLab {
  /** Four hex digits, in every name this lab makes (interface names are at most 15 characters). */
  readonly tag = randomBytes(2).toString('hex');
  /** A number from 16 to 215 for the third octet of this lab's subnets. */
  readonly octet = 16 + (Number.parseInt(this.tag, 16) % 200);
  readonly #namespaces: string[] = [];
  readonly #links: string[] = [];
  #count = 0;

  /** A new namespace with its loopback up; `name` is a short prefix. */
  namespace(name: string): string {
    const ns = `${name}${this.tag}`;
    ip('netns', 'add', ns);
    this.#namespaces.push(ns);
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    return ns;
  }

  /**
   * A veth pair from the host to `ns`, addressed HOST/30 and NODE/30 in 10.`second`.`octet`.0/24:
   * the `index`-th /30 of that subnet (0–62).
   */
  link(ns: string, second: number, index: number): Link {
    const n = this.#count++;
    const outer = `ol${n}${this.tag}`;
    const inner = `il${n}${this.tag}`;
    const host = `10.${second}.${this.octet}.${4 * index + 1}`;
    const node = `10.${second}.${this.octet}.${4 * index + 2}`;
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
    this.#links.push(outer);
    ip('link', 'set', inner, 'netns', ns);
    ip('addr', 'add', `${host}/30`, 'dev', outer);
    ip('link', 'set', outer, 'up');
    ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${node}/30`, 'dev', inner);
    ip('netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up');
    return { outer, inner, host, node };
  }

  /**
   * A switch (a bridge in the host's namespace, with no address) joining `namespaces`: each gets
   * one port, addressed 10.`second`.`octet`.(i+1)/24. Returns the host side of each port, in
   * order: cutting one cuts that namespace from the others.
   */
  bridge(namespaces: readonly string[], second: number): { ports: string[]; addresses: string[] } {
    const bridge = `ob${this.tag}`;
    ip('link', 'add', bridge, 'type', 'bridge');
    this.#links.push(bridge);
    ip('link', 'set', bridge, 'up');
    const ports: string[] = [];
    const addresses: string[] = [];
    namespaces.forEach((ns, i) => {
      const outer = `ob${i}${this.tag}`;
      const inner = `ib${i}${this.tag}`;
      const address = `10.${second}.${this.octet}.${i + 1}`;
      ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      this.#links.push(outer);
      ip('link', 'set', inner, 'netns', ns);
      ip('link', 'set', outer, 'master', bridge);
      ip('link', 'set', outer, 'up');
      ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/24`, 'dev', inner);
      ip('netns', 'exec', ns, 'ip', 'link', 'set', inner, 'up');
      ports.push(outer);
      addresses.push(address);
    });
    return { ports, addresses };
  }

  /** The link goes down on the host's side: nothing crosses it, and nobody is told. */
  cut(outer: string): void {
    ip('link', 'set', outer, 'down');
  }

  heal(outer: string): void {
    ip('link', 'set', outer, 'up');
  }

  /** `argv` run inside `ns`. */
  static exec(ns: string, argv: readonly string[]): string[] {
    return ['ip', 'netns', 'exec', ns, ...argv];
  }

  /** Removes every namespace and link this lab made (a namespace's links go with it). */
  remove(): void {
    for (const ns of this.#namespaces.splice(0)) spawnSync('ip', ['netns', 'del', ns]);
    for (const link of this.#links.splice(0).reverse()) spawnSync('ip', ['link', 'del', link]);
  }
}

/** A running TCP forwarder (`forwardTcp`). */
export interface Forwarder {
  stop(): void;
}

/**
 * Forwards `listenHost:listenPort` to `target` (`host:port`) with socat: how a node in a namespace
 * reaches the host's loopback-only MariaDB over a link that a test can cut. Resolves once it
 * accepts connections (at most 50 tries, 100 ms apart). socat forks a child per connection, so it
 * runs in a process group of its own and `stop` ends the group.
 */
export async function forwardTcp(listenHost: string, listenPort: number, target: string): Promise<Forwarder> {
  const child = spawn('socat', [`TCP-LISTEN:${listenPort},bind=${listenHost},fork,reuseaddr`, `TCP:${target}`], {
    stdio: 'ignore',
    detached: true,
  });
  const stop = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
  };
  for (let i = 0; i < 50; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(listenPort, listenHost, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return { stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  stop();
  throw new Error(`socat did not listen on ${listenHost}:${listenPort} within 5 s`);
}
