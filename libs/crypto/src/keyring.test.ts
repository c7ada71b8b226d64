/** @module @gatehouse/crypto/keyring.test — key rings for secrets at rest (issue 32). */
import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { decrypt, deriveEncryptionKey, encrypt, keyRing, keyTexts, macHex, matchMac, needsReseal, reseal, ringOf } from './index.ts';
import { flipOneBit } from '@gatehouse/testing';

const OLD = 'old-encryption-key-of-32-characters';
const NEW = 'new-encryption-key-of-32-characters';

describe('keyRing: --encryption-key names one or more keys, the first seals', () => {
  it('splits on commas, trims, drops empties and duplicates, keeps the order', () => {
    expect(keyTexts(` ${NEW} ,,${OLD},${NEW}`)).toEqual([NEW, OLD]);
    expect(keyRing(`${NEW},${OLD}`, 'fallback').keys.map((k) => k.secret)).toEqual([NEW, OLD]);
  });

  it('without a key it is the one key of the fallback (the single-key derivation of before rings)', () => {
    expect(keyRing(undefined, 'derived').keys.map((k) => k.secret)).toEqual(['derived']);
    expect(keyRing('  ', () => 'lazy').keys.map((k) => k.secret)).toEqual(['lazy']);
    expect(() => keyRing(undefined, '')).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it('a key id is 11 base64url characters, stable per key, and reveals nothing of the key', () => {
    const [a, b] = keyRing(`${NEW},${OLD}`, '').keys;
    expect(a.id).toMatch(/^[A-Za-z0-9_-]{11}$/);
    expect(a.id).not.toBe(b!.id);
    expect(ringOf(NEW).keys[0].id).toBe(a.id);
    expect(a.aes.equals(deriveEncryptionKey(NEW))).toBe(true);
  });
});

describe('sealing under a ring (AES-256-GCM, SP 800-38D)', () => {
  it('seals with the first key and names it; every key of the ring opens', () => {
    const before = encrypt(ringOf(OLD), 'totp secret', 'totp:u1');
    const ring = ringOf(NEW, OLD);
    expect(before.startsWith(`v2.${ringOf(OLD).keys[0].id}.`)).toBe(true);
    expect(decrypt(ring, before, 'totp:u1')).toBe('totp secret');
    const after = encrypt(ring, 'totp secret', 'totp:u1');
    expect(after.startsWith(`v2.${ring.keys[0].id}.`)).toBe(true);
    expect(decrypt(ringOf(NEW), after, 'totp:u1')).toBe('totp secret');
  });

  it('opens a v1 value (sealed before rings) with whichever key of the ring opens it', () => {
    const legacy = encrypt(deriveEncryptionKey(OLD), 'saml key', 'kid-1');
    expect(legacy).toMatch(/^v1\./);
    expect(decrypt(ringOf(NEW, OLD), legacy, 'kid-1')).toBe('saml key');
    expect(() => decrypt(ringOf(NEW), legacy, 'kid-1')).toThrow(expect.objectContaining({ code: 'internal' }));
  });

  it('refuses a value whose key left the ring, a wrong AAD and a changed byte', () => {
    const sealed = encrypt(ringOf(OLD), 'x', 'a');
    expect(() => decrypt(ringOf(NEW), sealed, 'a')).toThrow(expect.objectContaining({ code: 'internal' }));
    expect(() => decrypt(ringOf(OLD), sealed, 'b')).toThrow(expect.objectContaining({ code: 'internal' }));
    const flipped = flipOneBit(sealed);
    expect(flipped).not.toBe(sealed);
    expect(() => decrypt(ringOf(OLD), flipped, 'a')).toThrow(expect.objectContaining({ code: 'internal' }));
  });

  it('reseal: a value under an older key (or v1) is sealed again under the first; one already there is left (null)', () => {
    const ring = ringOf(NEW, OLD);
    const old = encrypt(ringOf(OLD), 'secret', 'aad');
    expect(needsReseal(ring, old)).toBe(true);
    const next = reseal(ring, old, 'aad')!;
    expect(needsReseal(ring, next)).toBe(false);
    expect(decrypt(ringOf(NEW), next, 'aad')).toBe('secret');
    expect(reseal(ring, next, 'aad')).toBeNull();
    expect(reseal(ring, encrypt(deriveEncryptionKey(OLD), 'secret', 'aad'), 'aad')).toMatch(new RegExp(`^v2\\.${ring.keys[0].id.replace(/-/g, '\\-')}\\.`));
    expect(() => reseal(ringOf(NEW), old, 'aad')).toThrow(expect.objectContaining({ code: 'internal' }));
  });
});

describe('MACs under a ring (HMAC-SHA-256)', () => {
  const hmac = (k: string, d: string): string => createHmac('sha256', k).update(d).digest('hex');

  it('macHex uses the first key; matchMac says which key made a stored digest (-1: none)', () => {
    const ring = ringOf(NEW, OLD);
    expect(macHex(ring, 'secret')).toBe(hmac(NEW, 'secret'));
    expect(matchMac(ring, 'secret', hmac(NEW, 'secret'))).toBe(0);
    expect(matchMac(ring, 'secret', hmac(OLD, 'secret'))).toBe(1);
    expect(matchMac(ring, 'other', hmac(OLD, 'secret'))).toBe(-1);
    expect(matchMac(ring, 'secret', `hmac-sha256:${hmac(OLD, 'secret')}`, (h) => `hmac-sha256:${h}`)).toBe(1);
    expect(matchMac(ring, 'secret', 'short')).toBe(-1);
  });
});
