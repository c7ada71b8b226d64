/** @module otp.test: email/SMS one-time codes (behaviour.md §4.4): format, HMAC storage, comparison, key. */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { generateOtp, OTP_ALPHABET, OTP_LENGTH, otpDigest, otpKey, otpMatches } from './otp.ts';

const KEY = 'k'.repeat(32);
const hmac = (key: string, data: string): string => createHmac('sha256', key).update(data).digest('hex');

describe('format (behaviour.md §4.4)', () => {
  it('the alphabet is ABCDEFGHJKLMNPQRSTUVWXYZ123456789: no 0/O, no I', () => {
    expect(OTP_ALPHABET).toBe('ABCDEFGHJKLMNPQRSTUVWXYZ123456789');
    for (const lookAlike of ['0', 'O', 'I']) expect(OTP_ALPHABET).not.toContain(lookAlike);
    expect(new Set(OTP_ALPHABET).size).toBe(OTP_ALPHABET.length);
  });

  it('a code is 6 characters drawn from the whole alphabet', () => {
    expect(OTP_LENGTH).toBe(6);
    const codes = Array.from({ length: 2000 }, generateOtp);
    for (const code of codes) expect(code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ1-9]{6}$/);
    // 12,000 draws from 33 characters: each is expected about 360 times, so none is missing
    expect(new Set(codes.join(''))).toEqual(new Set(OTP_ALPHABET));
    expect(new Set(codes).size).toBeGreaterThan(1990);
  });
});

describe('storage (behaviour.md §4.4): HMAC-SHA-256 keyed by --encryption-key', () => {
  it('the digest is HMAC-SHA-256 over <user id>:<channel>:<CODE>, lower-case hex', () => {
    expect(otpDigest(KEY, 'u-1', 'email', 'ABC123')).toBe(hmac(KEY, 'u-1:email:ABC123'));
    expect(otpDigest(KEY, 'u-1', 'email', 'ABC123')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('the code itself is not in the digest, and the digest is keyed, not a bare hash of the code', () => {
    const digest = otpDigest(KEY, 'u-1', 'email', 'ABC123');
    expect(digest.toUpperCase()).not.toContain('ABC123');
    expect(digest).not.toBe(createHash('sha256').update('u-1:email:ABC123').digest('hex'));
    expect(digest).not.toBe(otpDigest('another-key', 'u-1', 'email', 'ABC123'));
  });

  it('a digest is bound to one user and one channel', () => {
    const digest = otpDigest(KEY, 'u-1', 'email', 'ABC123');
    expect(otpMatches(KEY, 'u-1', 'email', 'ABC123', digest)).toBe(true);
    expect(otpMatches(KEY, 'u-2', 'email', 'ABC123', digest)).toBe(false);
    expect(otpMatches(KEY, 'u-1', 'sms', 'ABC123', digest)).toBe(false);
  });

  it('the stored digest is not accepted as input', () => {
    const digest = otpDigest(KEY, 'u-1', 'email', 'ABC123');
    expect(otpMatches(KEY, 'u-1', 'email', digest, digest)).toBe(false);
    expect(otpMatches(KEY, 'u-1', 'email', digest.toUpperCase(), digest)).toBe(false);
  });
});

describe('comparison (behaviour.md §4.4): input is trimmed and compared case-insensitively', () => {
  const digest = otpDigest(KEY, 'u-1', 'email', 'ABC123');

  it.each(['ABC123', 'abc123', 'aBc123', '  ABC123', 'abc123 \t', '\n abc123 \n'])('accepts %j', (input) => {
    expect(otpMatches(KEY, 'u-1', 'email', input, digest)).toBe(true);
  });

  it.each(['ABC124', 'ABC12', 'ABC1234', 'A BC123', '', '   '])('refuses %j', (input) => {
    expect(otpMatches(KEY, 'u-1', 'email', input, digest)).toBe(false);
  });

  it('stores the code upper-cased and trimmed, so the digest of any spelling is the same', () => {
    expect(otpDigest(KEY, 'u-1', 'email', ' abc123 ')).toBe(digest);
  });
});

describe('the key: --encryption-key, else derived from --client-secret', () => {
  it('is --encryption-key as given when it is set (a one-key ring)', () => {
    expect(otpKey(KEY, 'client-secret').keys.map((k) => k.secret)).toEqual([KEY]);
  });

  it('without --encryption-key, is HMAC-SHA-256(--client-secret, "gatehouse/otp/v1"): every process of a deployment derives the same key', () => {
    expect(otpKey(undefined, 'client-secret').keys[0].secret).toBe(hmac('client-secret', 'gatehouse/otp/v1'));
    expect(otpKey(undefined, 'client-secret').keys[0].secret).toBe(otpKey(undefined, 'client-secret').keys[0].secret);
  });

  it('the derived key is not the client secret, and differs per client secret', () => {
    expect(otpKey(undefined, 'client-secret').keys[0].secret).not.toBe('client-secret');
    expect(otpKey(undefined, 'client-secret').keys[0].secret).not.toBe(otpKey(undefined, 'other-secret').keys[0].secret);
  });

  it('a code stored under one key does not match under the other', () => {
    const derived = otpKey(undefined, 'client-secret');
    const digest = otpDigest(KEY, 'u-1', 'email', 'ABC123');
    expect(otpMatches(derived, 'u-1', 'email', 'ABC123', digest)).toBe(false);
    expect(otpMatches(derived, 'u-1', 'email', 'ABC123', otpDigest(derived, 'u-1', 'email', 'ABC123'))).toBe(true);
  });

  it('issue 32: a ring MACs new codes with its first key and verifies codes MACed under any of its keys', () => {
    const ring = otpKey(`new-key-of-32-characters-0123456,${KEY}`, 'client-secret');
    const before = otpDigest(KEY, 'u-1', 'email', 'ABC123');
    expect(otpDigest(ring, 'u-1', 'email', 'ABC123')).toBe(hmac('new-key-of-32-characters-0123456', 'u-1:email:ABC123'));
    expect(otpMatches(ring, 'u-1', 'email', 'abc123', before)).toBe(true);
    expect(otpMatches(ring, 'u-1', 'email', 'ABC124', before)).toBe(false);
    // once the old key is dropped, its codes no longer verify
    expect(otpMatches(otpKey('new-key-of-32-characters-0123456', 'client-secret'), 'u-1', 'email', 'ABC123', before)).toBe(false);
  });
});
