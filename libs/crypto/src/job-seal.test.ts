/** @module @gatehouse/crypto/job-seal.test — sealing the secrets of delivery jobs (issue 23). */
import { describe, expect, it } from '@jest/globals';
import { jobSealKey, openJobSecret, sealJobSecret } from './index.ts';
import { flipOneBit } from '@gatehouse/testing';

describe('jobSealKey / sealJobSecret / openJobSecret (AES-256-GCM, SP 800-38D)', () => {
  const key = jobSealKey('an-encryption-key-of-32-characters!', 'client-secret');

  it('round-trips a secret for the same job and recipient, and the sealed text never contains it', () => {
    const sealed = sealJobSecret(key, 'email.send', 'ada@example.com', '{"otp":"ABC123"}');
    expect(sealed).toMatch(/^v2\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('ABC123');
    expect(openJobSecret(key, 'email.send', 'ada@example.com', sealed)).toBe('{"otp":"ABC123"}');
    // a fresh IV each time: the same secret never seals to the same text
    expect(sealJobSecret(key, 'email.send', 'ada@example.com', '{"otp":"ABC123"}')).not.toBe(sealed);
  });

  it('refuses another recipient, another job kind, another key, or a changed byte', () => {
    const sealed = sealJobSecret(key, 'sms.send', '+15550100000', 'ABC123');
    expect(() => openJobSecret(key, 'sms.send', '+15550100001', sealed)).toThrow(expect.objectContaining({ code: 'internal' }));
    expect(() => openJobSecret(key, 'email.send', '+15550100000', sealed)).toThrow(expect.objectContaining({ code: 'internal' }));
    expect(() => openJobSecret(jobSealKey('another-key', 'client-secret'), 'sms.send', '+15550100000', sealed)).toThrow(expect.objectContaining({ code: 'internal' }));
    const flipped = flipOneBit(sealed);
    expect(flipped).not.toBe(sealed);
    expect(() => openJobSecret(key, 'sms.send', '+15550100000', flipped)).toThrow(expect.objectContaining({ code: 'internal' }));
  });

  it('without --encryption-key derives one key from --client-secret: the same in every process, another per secret', () => {
    const a = jobSealKey(undefined, 'client-secret');
    expect(a.keys).toHaveLength(1);
    expect(a.keys[0].aes).toHaveLength(32);
    expect(jobSealKey(undefined, 'client-secret').keys[0].aes.equals(a.keys[0].aes)).toBe(true);
    expect(jobSealKey(undefined, 'other-secret').keys[0].aes.equals(a.keys[0].aes)).toBe(false);
    expect(jobSealKey('client-secret', 'x').keys[0].aes.equals(a.keys[0].aes)).toBe(false);
    expect(() => jobSealKey(undefined, '')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});
