import { describe, expect, it } from 'vitest';
import * as codec from './index.ts';

describe('@orbit/spec/codec public API', () => {
  it('exports exactly the public names', () => {
    expect(Object.keys(codec).sort()).toStrictEqual(
      [
        'CodecError',
        'DEFAULT_MAX_DEPTH',
        'LEASE_SECRET_BYTES',
        'MAX_DEPTH_LIMIT',
        'RawJson',
        'StrictJsonError',
        'UINT64_MAX',
        'base64urlLength',
        'compareUint64',
        'decodeBase64url',
        'encodeBase64url',
        'formatTraceparent',
        'formatUint64',
        'isCanonicalBase64url',
        'isCanonicalUint64',
        'isRawJson',
        'parseStrict',
        'parseTraceparent',
        'parseUint64',
        'stringify',
        'trustedRawJson',
      ].sort(),
    );
  });
  it('round-trips a deliver frame with a raw result through the package entry point', async () => {
    const { parseStrict, stringify } = await import('@orbit/spec/codec');
    const text = '{"type":"event.deliver","body":{"event":{"snapshot":{"result":{"n":123456789012345678901234567890}}}}}';
    expect(stringify(parseStrict(text, { raw: [['body', 'event', 'snapshot', 'result']] }))).toBe(text);
  });
});
