/**
 * @module
 * The machine and the services the benchmark runs against, and per-process CPU and memory read
 * from /proc (Linux), so each measurement can say where its CPU time went.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import mysql from 'mysql2/promise';

const CLOCK_TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 10;
  }
})();

/** User + system CPU milliseconds of a process, or NaN when it cannot be read. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is index 0, utime is 11, stime is 12.
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
  } catch {
    return NaN;
  }
}

/** Resident set size of a process in KiB, or NaN. */
export function processRssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** The pid of the first process whose command name is `name`, or null. */
export function findPid(name: string): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) return Number(entry);
    } catch {
      // the process went away
    }
  }
  return null;
}

/** This process's CPU milliseconds (user + system). */
export function selfCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

export interface MachineInfo {
  readonly cpus: number;
  readonly cpu_model: string;
  readonly memory_gib: number;
  readonly os: string;
  readonly node: string;
  readonly mariadb: string;
  readonly mariadb_durability: string;
  readonly nats_server: string;
}

export async function machineInfo(mysqlRoot: string): Promise<MachineInfo> {
  let mariadb = 'unavailable';
  let durability = '';
  try {
    const conn = await mysql.createConnection({ uri: mysqlRoot });
    try {
      const [rows] = await conn.query(
        'SELECT VERSION() AS v, @@innodb_flush_log_at_trx_commit AS f, @@innodb_buffer_pool_size AS b, @@log_bin AS l',
      );
      const row = (rows as Record<string, unknown>[])[0]!;
      mariadb = String(row.v);
      durability = `innodb_flush_log_at_trx_commit=${row.f}, buffer_pool=${Math.round(Number(row.b) / 1048576)} MiB, log_bin=${row.l}`;
    } finally {
      await conn.end();
    }
  } catch {
    // reported as unavailable
  }
  let nats = 'unavailable';
  try {
    nats = execFileSync('nats-server', ['--version'], { encoding: 'utf8', timeout: 5000 }).trim();
  } catch {
    // reported as unavailable
  }
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 1024 ** 3),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    mariadb,
    mariadb_durability: durability,
    nats_server: nats,
  };
}

/** MySQL/MariaDB global counters that explain a throughput figure: statements, commits, fsyncs. */
export async function mysqlCounters(conn: mysql.Connection): Promise<Record<string, number>> {
  const [rows] = await conn.query(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_commit', 'Com_select', 'Com_update', 'Com_insert', 'Innodb_data_fsyncs', 'Innodb_row_lock_waits', 'Innodb_rows_read')",
  );
  const names: Record<string, string> = {
    Questions: 'statements',
    Com_commit: 'commits',
    Com_select: 'selects',
    Com_update: 'updates',
    Com_insert: 'inserts',
    Innodb_data_fsyncs: 'fsyncs',
    Innodb_row_lock_waits: 'row_lock_waits',
    Innodb_rows_read: 'rows_read',
  };
  const out: Record<string, number> = {};
  for (const row of rows as Array<{ Variable_name: string; Value: string }>)
    out[names[row.Variable_name] ?? row.Variable_name] = Number(row.Value);
  return out;
}
