import { describe, expect, it } from 'vitest';
import { checkEntriesMatch, describeEntry, entriesFor, KnownFailingError, matchesFailure, parseKnownFailing } from './known-failing.ts';

describe('parseKnownFailing', () => {
  it('takes the case pattern, the failure it expects and the reason (same line or the comment lines directly above)', () => {
    const entries = parseKnownFailing(
      '# server bug #12: Cache-Control missing on 404\n# (tracked upstream)\nenvelope.cache-control-no-store /unknown id \\(404\\): ' +
        'Cache-Control/\n\nack.*   timeout  # ACK replies are late\n',
      'kf.txt',
    );
    expect(entries.map((e) => [e.pattern, describeEntry(e), e.reason])).toEqual([
      [
        'envelope.cache-control-no-store',
        'kf.txt:3 /unknown id \\(404\\): Cache-Control/',
        'server bug #12: Cache-Control missing on 404 (tracked upstream)',
      ],
      ['ack.*', 'kf.txt:5 a timeout failure', 'ACK replies are late'],
    ]);
  });

  it('keeps flags and escaped slashes of a message pattern', () => {
    const [entry] = parseKnownFailing('faults.unknown-route-envelope /GET \\/v1\\/nothing/i # x\n');
    expect(matchesFailure(entry!, { message: 'get /v1/nothing-here: expected 404', kind: 'assert' })).toBe(true);
  });

  it('refuses an entry that does not name the failure it expects (a bare case id would absorb any failure)', () => {
    expect(() => parseKnownFailing('json.duplicate-key-rejected # a reason\n', 'kf.txt')).toThrow(
      new KnownFailingError(
        'kf.txt:1: "json.duplicate-key-rejected" must name the failure it expects: a /message pattern/ or one of assert, setup, ' +
          'timeout, network, frames',
      ),
    );
  });

  it('refuses an entry without a reason (a blank line ends the comment above)', () => {
    expect(() => parseKnownFailing('# a reason\n\njson.duplicate-key-rejected /x/\n', 'kf.txt')).toThrow(
      new KnownFailingError('kf.txt:3: "json.duplicate-key-rejected" needs a reason (a # comment on the line or directly above)'),
    );
  });

  it('refuses something that is not a case-id pattern, an unterminated or invalid pattern, and trailing words', () => {
    expect(() => parseKnownFailing('json duplicate # x')).toThrow(KnownFailingError);
    expect(() => parseKnownFailing('json.a /unterminated # x')).toThrow(/does not end with/);
    expect(() => parseKnownFailing('json.a /(/ # x')).toThrow(/not a valid regular expression/);
    expect(() => parseKnownFailing('json.a timeout later # x')).toThrow(/unexpected "later/);
  });
});

describe('matching failures', () => {
  const entries = parseKnownFailing('ack.prop-* /lease_secret/ # x\nack.success network # y\n');

  it('lists a case by pattern and matches only the failure the entry names', () => {
    expect(entriesFor(entries, 'ack.prop-noncanonical-secret').map((e) => e.line)).toEqual([1]);
    expect(entriesFor(entries, 'ack.replay-deduplicated')).toEqual([]);
    const [secret, network] = entries as [(typeof entries)[0], (typeof entries)[0]];
    expect(matchesFailure(secret, { message: 'ACK with lease_secret "x=" was accepted', kind: 'assert' })).toBe(true);
    expect(matchesFailure(secret, { message: 'network: connect ECONNREFUSED', kind: 'network' })).toBe(false);
    expect(matchesFailure(network, { message: 'network: connect ECONNREFUSED', kind: 'network' })).toBe(true);
    expect(matchesFailure(network, { message: 'expected an ack reply', kind: 'assert' })).toBe(false);
  });

  it('reports entries that match no case', () => {
    expect(() => checkEntriesMatch(entries, ['ack.success'])).toThrow(/matches no case/);
  });
});
