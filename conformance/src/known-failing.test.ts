import { describe, expect, it } from 'vitest';
import { checkEntriesMatch, knownFailingEntry, KnownFailingError, parseKnownFailing } from './known-failing.ts';

describe('parseKnownFailing', () => {
  it('takes the reason from the same line or from the comment lines directly above', () => {
    const entries = parseKnownFailing(
      '# server bug #12: Cache-Control missing on 404\n# (tracked upstream)\nenvelope.cache-control-no-store\n\nack.*   # ACK replies are late\n',
    );
    expect(entries).toEqual([
      { pattern: 'envelope.cache-control-no-store', reason: 'server bug #12: Cache-Control missing on 404 (tracked upstream)', line: 3 },
      { pattern: 'ack.*', reason: 'ACK replies are late', line: 5 },
    ]);
  });

  it('refuses an entry without a reason (a blank line ends the comment above)', () => {
    expect(() => parseKnownFailing('# a reason\n\njson.duplicate-key-rejected\n', 'kf.txt')).toThrow(
      new KnownFailingError('kf.txt:3: "json.duplicate-key-rejected" needs a reason (a # comment on the line or directly above)'),
    );
  });

  it('refuses something that is not a case-id pattern', () => {
    expect(() => parseKnownFailing('json duplicate # x')).toThrow(KnownFailingError);
  });

  it('matches ids with * wildcards and reports entries that match nothing', () => {
    const entries = parseKnownFailing('ack.prop-* # x\n');
    expect(knownFailingEntry(entries, 'ack.prop-noncanonical-epoch')?.pattern).toBe('ack.prop-*');
    expect(knownFailingEntry(entries, 'ack.success')).toBeUndefined();
    expect(() => checkEntriesMatch(entries, ['ack.success'])).toThrow(/matches no case/);
  });
});
