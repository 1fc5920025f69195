/**
 * @module slow-log
 * What MariaDB spends on each statement, read from its slow query log with every statement logged
 * (`long_query_time = 0`) and `log_slow_verbosity = 'query_plan,innodb'`: the wall time, the rows
 * examined and the InnoDB pages each execution touched. `bench/diagnose.ts` turns it on with
 * `DIAGNOSE_SLOW_LOG=1` (MySQL only), because performance_schema is off by default and cannot be
 * turned on without a restart, while the slow log can.
 *
 * A pooled connection copies `long_query_time` when it connects, so the log must be on before the
 * server opens its pools; the window is cut by the log's byte offsets when recording starts and ends.
 */
import type { Connection } from 'mysql2/promise';

/** One kind of statement: executions, and per execution the wall time, rows examined, pages and bytes sent. */
export interface StatementCost {
  readonly statement: string;
  readonly count: number;
  readonly wallUs: number;
  readonly rowsExamined: number;
  readonly pages: number;
  readonly bytesSent: number;
}

/** Statement text with its literals and row lists folded, so executions of one statement group together. */
export function statementKey(sql: string): string {
  return sql
    .replace(/\s+/g, ' ')
    .replace(/'(?:[^'\\]|\\.)*'/g, '?')
    .replace(/\b\d+\b/g, 'N')
    .replace(/\((?:\?|N|NULL)(?:, ?(?:\?|N|NULL))*\)(?:, ?\((?:\?|N|NULL)(?:, ?(?:\?|N|NULL))*\))*/g, '(…)')
    .replace(/SELECT .*? FROM/, (m) => (m.length > 40 ? 'SELECT … FROM' : m))
    .trim()
    .slice(0, 90);
}

const number = (block: string, field: string): number => Number(new RegExp(`${field}: ([\\d.]+)`).exec(block)?.[1] ?? 0);

/** The statements of a slow-log excerpt, most total wall time first. */
export function summarizeSlowLog(text: string): StatementCost[] {
  const groups = new Map<string, { count: number; wall: number; rows: number; pages: number; bytes: number }>();
  for (const block of text.split(/\n(?=# User@Host)/)) {
    if (!block.includes('# Query_time:')) continue;
    const sql = block
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#') && !/^(SET timestamp|use )/.test(line))
      .join(' ');
    if (sql === '') continue;
    const key = statementKey(sql);
    const g = groups.get(key) ?? { count: 0, wall: 0, rows: 0, pages: 0, bytes: 0 };
    g.count++;
    g.wall += number(block, 'Query_time') * 1e6;
    g.rows += number(block, 'Rows_examined');
    g.pages += number(block, 'Pages_accessed');
    g.bytes += number(block, 'Bytes_sent');
    groups.set(key, g);
  }
  return [...groups]
    .map(([statement, g]) => ({
      statement,
      count: g.count,
      wallUs: g.wall / g.count,
      rowsExamined: g.rows / g.count,
      pages: g.pages / g.count,
      bytesSent: g.bytes / g.count,
    }))
    .sort((a, b) => b.wallUs * b.count - a.wallUs * a.count);
}

const SETTINGS = ['slow_query_log', 'slow_query_log_file', 'long_query_time', 'log_slow_verbosity'] as const;

/** Logs every statement of connections opened from now on to `file`; the returned function puts the settings back. */
export async function logEveryStatement(admin: Connection, file: string): Promise<() => Promise<void>> {
  const [rows] = await admin.query(`SHOW GLOBAL VARIABLES WHERE Variable_name IN (${SETTINGS.map(() => '?').join(', ')})`, [...SETTINGS]);
  const before = new Map((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, r.Value]));
  await admin.query(
    "SET GLOBAL slow_query_log_file = ?, log_slow_verbosity = 'query_plan,innodb', long_query_time = 0, slow_query_log = 1",
    [file],
  );
  return async () => {
    await admin.query('SET GLOBAL slow_query_log = ?, long_query_time = ?, log_slow_verbosity = ?, slow_query_log_file = ?', [
      before.get('slow_query_log') === 'ON' ? 1 : 0,
      Number(before.get('long_query_time') ?? 10),
      before.get('log_slow_verbosity') ?? '',
      before.get('slow_query_log_file') ?? 'slow.log',
    ]);
  };
}
