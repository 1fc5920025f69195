import { describe, expect, it } from 'vitest';
import { statementKey, summarizeSlowLog } from '../bench/lib/slow-log.ts';

const entry = (wall: string, rows: number, pages: number, sql: string) => `# User@Host: root[root] @  [127.0.0.1]
# Thread_id: 7  Schema: orbit_bench  QC_hit: No
# Query_time: ${wall}  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: ${rows}
# Rows_affected: 0  Bytes_sent: 100
# Pages_accessed: ${pages}  Pages_read: 0  Pages_prefetched: 0  Pages_updated: 0  Old_rows_read: 0
SET timestamp=1796383468;
${sql}
`;

describe('the slow-log reading of bench/diagnose.ts', () => {
  it('folds literals and row lists, and keeps the table a SELECT reads', () => {
    expect(statementKey("SELECT a, b, c, d, e, f, g, h, i, j, k, l, m FROM results WHERE id = '01ab' AND n > 42")).toBe(
      'SELECT … FROM results WHERE id = ? AND n > N',
    );
    expect(statementKey('INSERT INTO t (a, b) VALUES (1, NULL), (2, 3)')).toBe('INSERT INTO t (a, b) VALUES (…)');
    expect(statementKey('INSERT INTO t (a, b) VALUES (?, ?), (?, ?)')).toBe('INSERT INTO t (a, b) VALUES (…)');
  });

  it('groups executions of one statement and averages their costs, most total time first', () => {
    const log = [
      '# Time: 261204 11:24:28',
      entry('0.000100', 1, 2, "SELECT x FROM s WHERE id = 'a';"),
      entry('0.000300', 3, 6, "SELECT x FROM s WHERE id = 'b';"),
      entry('0.001000', 0, 0, 'COMMIT;'),
    ].join('\n');
    expect(summarizeSlowLog(log)).toEqual([
      { statement: 'COMMIT;', count: 1, wallUs: 1000, rowsExamined: 0, pages: 0, bytesSent: 100 },
      { statement: 'SELECT x FROM s WHERE id = ?;', count: 2, wallUs: 200, rowsExamined: 2, pages: 4, bytesSent: 100 },
    ]);
  });
});
