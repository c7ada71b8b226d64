/** @module @gatehouse/config/duration.test — duration flag values (issue 32 retention flags) and the repeatable --encryption-key. */
import { describe, expect, it } from '@jest/globals';
import { duration } from './parsers.ts';
import { ok } from './test-fixtures.ts';

describe('duration flags', () => {
  it.each([['0', 0], ['3600', 3600], ['90s', 90], ['15m', 900], ['12h', 43_200], ['30d', 2_592_000], [' 7D ', 604_800]])('%j is %d seconds', (raw, seconds) => {
    expect(duration.parse(raw, '--x')).toBe(seconds);
  });
  it.each(['', '-1', '1.5d', '1w', 'd', '10 d'])('refuses %j', (raw) => {
    expect(() => duration.parse(raw, '--x')).toThrow('--x must be a duration');
  });
  it('--audit-log-retention and --webhook-log-retention default to 365 and 30 days', () => {
    expect(ok('admin')).toMatchObject({ auditLogRetention: 31_536_000, webhookLogRetention: 2_592_000 });
    expect(ok('all', '--audit-log-retention=0', '--webhook-log-retention=72h')).toMatchObject({ auditLogRetention: 0, webhookLogRetention: 259_200 });
  });
});

describe('--encryption-key is repeatable (a key ring)', () => {
  it('joins repeated values in order; a comma list is kept as written', () => {
    expect(ok('mfa', '--encryption-key=new-key', '--encryption-key', 'old-key').encryptionKey).toBe('new-key,old-key');
    expect(ok('mfa', '--encryption-key=new-key,old-key').encryptionKey).toBe('new-key,old-key');
  });
});
