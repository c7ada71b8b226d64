import { describe, it, expect } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createJwtSigner, type JwtSignerOptions, type JwtType } from './jwt.ts';

function keysFor(type: JwtType): JwtSignerOptions {
  if (type.startsWith('HS')) return { type, secret: `secret-for-${type}-0123456789abcdef` };
  const pair = type.startsWith('RS')
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[type as 'ES256']! });
  return {
    type,
    privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

const ALL: JwtType[] = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'];

describe('createJwtSigner', () => {
  it.each(ALL)('signs and verifies %s with kid, iat and exp', async (type) => {
    const signer = createJwtSigner(keysFor(type));
    const token = await signer.sign({ sub: 'u1', token_type: 'access_token' }, { expiresInSeconds: 60, nowSeconds: 1_000_000 });
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: type, kid: signer.kid, typ: 'JWT' });
    const claims = await signer.verify(token, { nowSeconds: 1_000_030 });
    expect(claims).toMatchObject({ sub: 'u1', iat: 1_000_000, exp: 1_000_060 });
  });

  it('publishes asymmetric public keys in JWKS with an RFC 7638 kid and never private parts', async () => {
    const signer = createJwtSigner(keysFor('ES256'));
    const { keys } = signer.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', kid: signer.kid, alg: 'ES256', use: 'sig' });
    expect(keys[0]).not.toHaveProperty('d');
    const rsa = createJwtSigner(keysFor('RS256')).jwks().keys[0]!;
    expect(rsa).toMatchObject({ kty: 'RSA', alg: 'RS256', e: 'AQAB' });
    expect(rsa).not.toHaveProperty('d');
    expect(rsa).not.toHaveProperty('p');
  });

  it('never publishes HMAC keys', () => {
    expect(createJwtSigner(keysFor('HS256')).jwks()).toEqual({ keys: [] });
  });

  it('refuses a tampered token, an expired token and another key', async () => {
    const signer = createJwtSigner(keysFor('RS256'));
    const token = await signer.sign({ sub: 'u1' }, { expiresInSeconds: 60, nowSeconds: 1000 });
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...decodeJwt(token), sub: 'admin' })).toString('base64url');
    await expect(signer.verify(`${h}.${forged}.${s}`, { nowSeconds: 1010 })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid token' });
    await expect(signer.verify(token, { nowSeconds: 1061 })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(createJwtSigner(keysFor('RS256')).verify(token, { nowSeconds: 1010 })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(signer.verify('not-a-jwt')).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(p).toBeDefined();
  });

  it('refuses alg none and an HMAC token signed with the public key (alg confusion)', async () => {
    const opts = keysFor('RS256');
    const signer = createJwtSigner(opts);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    await expect(signer.verify(none)).rejects.toMatchObject({ code: 'unauthenticated' });
    const confused = createJwtSigner({ type: 'HS256', secret: opts.publicKeyPem! });
    const t = await confused.sign({ sub: 'x' }, { expiresInSeconds: 60 });
    await expect(signer.verify(t)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('verifies tokens of the secondary key and publishes it, but signs with the primary', async () => {
    const old = keysFor('ES384');
    const oldSigner = createJwtSigner(old);
    const oldToken = await oldSigner.sign({ sub: 'u' }, { expiresInSeconds: 60 });
    const signer = createJwtSigner({ ...keysFor('RS256'), secondary: { type: 'ES384', publicKeyPem: old.publicKeyPem! } });
    await expect(signer.verify(oldToken)).resolves.toMatchObject({ sub: 'u' });
    expect(signer.jwks().keys.map((k) => k.kid)).toEqual([signer.kid, oldSigner.kid]);
    expect(decodeProtectedHeader(await signer.sign({}, { expiresInSeconds: 5 })).alg).toBe('RS256');
    const hsOld = createJwtSigner({ type: 'HS256', secret: 'old-secret-old-secret-old-secret' });
    const hsRot = createJwtSigner({ type: 'HS512', secret: 'new-secret-new-secret-new-secret', secondary: { type: 'HS256', secret: 'old-secret-old-secret-old-secret' } });
    await expect(hsRot.verify(await hsOld.sign({ sub: 'h' }, { expiresInSeconds: 60 }))).resolves.toMatchObject({ sub: 'h' });
    expect(hsRot.jwks().keys).toEqual([]);
  });

  it('rejects bad key material with the startup messages', () => {
    expect(() => createJwtSigner({ type: 'HS256' })).toThrow('--jwt-secret is required for HS256');
    expect(() => createJwtSigner({ type: 'RS256' })).toThrow('--jwt-private-key and --jwt-public-key are required for RS256');
    expect(() => createJwtSigner({ type: 'RS256', privateKeyPem: 'garbage' })).toThrow('--jwt-private-key is not a valid PEM RSA private key');
    const es = keysFor('ES256');
    expect(() => createJwtSigner({ ...es, type: 'ES384' })).toThrow(/not a valid PEM EC private key for ES384/);
    expect(() => createJwtSigner({ ...es, type: 'RS256' })).toThrow('--jwt-private-key is not a valid PEM RSA private key');
    expect(() => createJwtSigner({ ...es, publicKeyPem: keysFor('ES256').publicKeyPem! })).toThrow('--jwt-public-key does not match --jwt-private-key');
    expect(() => createJwtSigner({ type: 'XX' as JwtType })).toThrow('unsupported --jwt-type: XX');
  });

  it.each(['HS256', 'ES256'] as JwtType[])('%s: a token verified before still expires, and a changed signature is still refused', async (type) => {
    const signer = createJwtSigner(keysFor(type));
    const token = await signer.sign({ sub: 'u', nbf: 1005 }, { expiresInSeconds: 60, nowSeconds: 1000 });
    await expect(signer.verify(token, { nowSeconds: 1004 })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(signer.verify(token, { nowSeconds: 1010 })).resolves.toMatchObject({ sub: 'u' });
    await expect(signer.verify(token, { nowSeconds: 1059 })).resolves.toMatchObject({ sub: 'u' });
    await expect(signer.verify(token, { nowSeconds: 1004 })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid token' });
    await expect(signer.verify(token, { nowSeconds: 1060 })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid token' });
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    const altered = `${token.slice(0, -2)}${last}${token.at(-1)}`;
    await expect(signer.verify(altered, { nowSeconds: 1010 })).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('hands each caller its own copy of the claims', async () => {
    const signer = createJwtSigner(keysFor('HS256'));
    const token = await signer.sign({ sub: 'u' }, { expiresInSeconds: 60 });
    const first = await signer.verify(token);
    first.sub = 'admin';
    await expect(signer.verify(token)).resolves.toMatchObject({ sub: 'u' });
    const again = await signer.verify(token);
    again.sub = 'other';
    await expect(signer.verify(token)).resolves.toMatchObject({ sub: 'u' });
  });
});
