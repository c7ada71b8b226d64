import { describe, it, expect } from '@jest/globals';
import { createHash } from 'node:crypto';
import { atHash, hmacSha256Hex, randomToken, sha256Hex, timingSafeEqualString } from './random.ts';
import { decrypt, deriveEncryptionKey, encrypt } from './aead.ts';

describe('random and digests', () => {
  it('randomToken is base64url of the requested entropy', () => {
    expect(randomToken()).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(randomToken(16), 'base64url')).toHaveLength(16);
    expect(randomToken()).not.toBe(randomToken());
  });

  it('sha256Hex and hmacSha256Hex match known vectors', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    // RFC 4231 test case 2
    expect(hmacSha256Hex('Jefe', 'what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it('timingSafeEqualString compares exactly', () => {
    expect(timingSafeEqualString('secret', 'secret')).toBe(true);
    expect(timingSafeEqualString('secret', 'secreT')).toBe(false);
    expect(timingSafeEqualString('secret', 'secret2')).toBe(false);
    expect(timingSafeEqualString('', '')).toBe(true);
  });

  it('atHash is the left half of the alg hash (OIDC Core §3.1.3.6)', () => {
    // OIDC Core Appendix A.3 example access token and at_hash (RS256)
    expect(atHash('jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y', 'RS256')).toBe('77QmUPtjPfzWtF2AnpK9RQ');
    const full = createHash('sha512').update('tok').digest();
    expect(atHash('tok', 'ES512')).toBe(full.subarray(0, 32).toString('base64url'));
  });
});

describe('AES-256-GCM', () => {
  const key = deriveEncryptionKey('a-long-encryption-key-from-the-flag');
  it('round-trips and uses a fresh IV each time', () => {
    const a = encrypt(key, 'totp-seed');
    expect(a).toMatch(/^v1\./);
    expect(encrypt(key, 'totp-seed')).not.toBe(a);
    expect(decrypt(key, a)).toBe('totp-seed');
  });
  it('refuses a wrong key, wrong AAD and tampering', () => {
    const sealed = encrypt(key, 'secret', 'row-1');
    expect(() => decrypt(deriveEncryptionKey('other'), sealed, 'row-1')).toThrow('internal error');
    expect(() => decrypt(key, sealed, 'row-2')).toThrow('internal error');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[14] = raw[14]! ^ 1;
    expect(() => decrypt(key, `v1.${raw.toString('base64url')}`, 'row-1')).toThrow('internal error');
    expect(() => deriveEncryptionKey('')).toThrow('--encryption-key must not be empty');
  });
  it('derives a stable 32-byte key', () => {
    expect(deriveEncryptionKey('k')).toHaveLength(32);
    expect(deriveEncryptionKey('k').equals(deriveEncryptionKey('k'))).toBe(true);
  });
});
