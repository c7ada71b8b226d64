/** @module @gatehouse/config/jwt.test: PEM key validation of --jwt-private-key/--jwt-public-key (behaviour.md §1.4, RFC 7518 §3.3-3.4). */

import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { loadConfig } from './load.ts';
import { BASE, DB, load } from './test-fixtures.ts';

/** PEM (SPKI/PKCS#8) key pairs made for this run. */
const rsaPair = (bits: number) => generateKeyPairSync('rsa', {
  modulusLength: bits, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const ecPair = (curve: string) => generateKeyPairSync('ec', {
  namedCurve: curve, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});

const rsa = rsaPair(2048);
const rsaOther = rsaPair(2048);
const rsaSmall = rsaPair(1024);
const p256 = ecPair('P-256');
const p256Other = ecPair('P-256');
const p384 = ecPair('P-384');
const rsaPkcs1 = generateKeyPairSync('rsa', {
  modulusLength: 2048, publicKeyEncoding: { type: 'pkcs1', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
});

/** Loads `authn` with a key pair for `type`. */
function withKeys(type: string, privateKey: string, publicKey: string, ...extra: string[]) {
  return loadConfig('authn', [...BASE, ...DB, `--jwt-type=${type}`, `--jwt-private-key=${privateKey}`, `--jwt-public-key=${publicKey}`, ...extra]);
}

describe('RS* key pairs', () => {
  it('accepts a matching 2048-bit RSA pair', () => {
    const result = withKeys('RS256', rsa.privateKey, rsa.publicKey);
    expect(result.errors).toEqual([]);
    expect(result.config?.jwtPrivateKey).toBe(rsa.privateKey.trim());
  });
  it('accepts PKCS#1 PEM ("BEGIN RSA PRIVATE KEY")', () => {
    expect(withKeys('RS512', rsaPkcs1.privateKey, rsaPkcs1.publicKey).errors).toEqual([]);
  });
  it('normalises literal \\n sequences into line breaks', () => {
    const flat = (pem: string): string => pem.trim().replace(/\n/g, '\\n');
    const result = withKeys('RS384', flat(rsa.privateKey), flat(rsa.publicKey));
    expect(result.errors).toEqual([]);
    expect(result.config?.jwtPublicKey).toBe(rsa.publicKey.trim());
  });
  it('takes a PEM given as a separate argument (--jwt-private-key <pem>)', () => {
    const argv = [...BASE, ...DB, '--jwt-type', 'RS256', '--jwt-private-key', rsa.privateKey, '--jwt-public-key', rsa.publicKey];
    expect(loadConfig('authn', argv).errors).toEqual([]);
  });
  it('refuses a mismatched pair', () => {
    expect(withKeys('RS256', rsa.privateKey, rsaOther.publicKey).errors).toEqual(['--jwt-public-key does not match --jwt-private-key']);
  });
  it('refuses an EC private key for an RS* type', () => {
    expect(withKeys('RS256', p256.privateKey, rsa.publicKey).errors).toEqual(['--jwt-private-key is not a valid PEM RSA private key']);
  });
  it('refuses text that is not PEM', () => {
    expect(withKeys('RS256', 'not a key', 'not a key either').errors).toEqual([
      '--jwt-private-key is not a valid PEM RSA private key',
      '--jwt-public-key is not a valid PEM RSA public key',
    ]);
  });
  it('refuses a private key given as the public key, so it is never published or logged', () => {
    expect(withKeys('RS256', rsa.privateKey, rsa.privateKey).errors).toEqual(['--jwt-public-key is not a valid PEM RSA public key']);
  });
  it('refuses RSA keys under 2048 bits (RFC 7518 §3.3)', () => {
    expect(withKeys('RS256', rsaSmall.privateKey, rsaSmall.publicKey).errors).toEqual([
      '--jwt-private-key must be an RSA key of at least 2048 bits for RS256, got 1024',
    ]);
  });
});

describe('ES* key pairs', () => {
  it('accepts a matching P-256 pair for ES256', () => {
    expect(withKeys('ES256', p256.privateKey, p256.publicKey).errors).toEqual([]);
  });
  it('refuses a mismatched pair', () => {
    expect(withKeys('ES256', p256.privateKey, p256Other.publicKey).errors).toEqual(['--jwt-public-key does not match --jwt-private-key']);
  });
  it('refuses an RSA private key for an ES* type', () => {
    expect(withKeys('ES256', rsa.privateKey, p256.publicKey).errors).toEqual(['--jwt-private-key is not a valid PEM EC private key']);
  });
  it('refuses a key on the wrong curve (RFC 7518 §3.4)', () => {
    expect(withKeys('ES256', p384.privateKey, p384.publicKey).errors).toEqual([
      '--jwt-private-key must use curve P-256 for ES256, got P-384',
    ]);
    expect(withKeys('ES384', p384.privateKey, p384.publicKey).errors).toEqual([]);
  });
});

describe('rotation key (behaviour.md §1.2)', () => {
  it('accepts a previous HMAC secret or public key', () => {
    expect(load('--jwt-secondary-type=HS256', '--jwt-secondary-secret=old').config?.jwtSecondarySecret).toBe('old');
    expect(load('--jwt-secondary-type=RS256', `--jwt-secondary-public-key=${rsaOther.publicKey}`).errors).toEqual([]);
  });
  it('requires the type when a previous key is given', () => {
    expect(load('--jwt-secondary-secret=old').errors).toEqual([
      '--jwt-secondary-type is required with --jwt-secondary-secret or --jwt-secondary-public-key',
    ]);
  });
  it('requires the matching material for the previous type', () => {
    expect(load('--jwt-secondary-type=HS512').errors).toEqual(['--jwt-secondary-secret is required for HS512']);
    expect(load('--jwt-secondary-type=ES256').errors).toEqual(['--jwt-secondary-public-key is required for ES256']);
    expect(load('--jwt-secondary-type=ES256', `--jwt-secondary-public-key=${rsa.publicKey}`).errors).toEqual([
      '--jwt-secondary-public-key is not a valid PEM EC public key',
    ]);
  });
});

describe('start-up errors that say what to do (issue 15 item 7)', () => {
  const hs = (type: string, secret: string, ...extra: string[]) =>
    loadConfig('authn', [...BASE, ...DB, `--jwt-type=${type}`, `--jwt-secret=${secret}`, ...extra]);

  it('refuses an HMAC secret shorter than the hash output in production (RFC 7518 §3.2)', () => {
    expect(hs('HS256', 'x'.repeat(31)).errors).toEqual(['--jwt-secret is 31 bytes; HS256 needs at least 32 (RFC 7518 §3.2): use a long random value (or --env=development to start anyway)']);
    expect(hs('HS256', 'x'.repeat(32)).errors).toEqual([]);
    expect(hs('HS384', 'x'.repeat(47)).errors).toHaveLength(1);
    expect(hs('HS512', 'x'.repeat(63)).errors[0]).toMatch(/^--jwt-secret is 63 bytes; HS512 needs at least 64/);
    expect(hs('HS512', 'x'.repeat(64)).errors).toEqual([]);
  });

  it('only warns about a short secret with --env=development', () => {
    const dev = hs('HS256', 'short', '--env=development');
    expect(dev.errors).toEqual([]);
    expect(dev.warnings).toContain('--jwt-secret is 5 bytes; HS256 needs at least 32 (RFC 7518 §3.2): use a long random value');
  });

  it('keeps accepting a short previous secret, so rotating away from it stays possible', () => {
    expect(hs('HS256', 'x'.repeat(32), '--jwt-secondary-type=HS256', '--jwt-secondary-secret=old').errors).toEqual([]);
  });

  it('says a key flag takes the PEM text when given a file path', () => {
    expect(withKeys('RS256', '/etc/gatehouse/key.pem', rsa.publicKey).errors).toEqual([
      '--jwt-private-key is not a valid PEM RSA private key: it takes the PEM text, or file: and the path (for example --jwt-private-key=file:/etc/gatehouse/key.pem)',
    ]);
    expect(withKeys('ES256', p256.privateKey, 'public.pem').errors).toEqual([
      '--jwt-public-key is not a valid PEM EC public key: it takes the PEM text, or file: and the path (for example --jwt-public-key=file:public.pem)',
    ]);
    // not a path: the plain message of behaviour.md §1.4
    expect(withKeys('RS256', 'garbage', rsa.publicKey).errors).toEqual(['--jwt-private-key is not a valid PEM RSA private key']);
  });
});
