/**
 * @module @gatehouse/authn/domain/validate-dpop.test
 * `validate_jwt_token` for a resource server holding a DPoP-bound access token (issue 34 §4, RFC 9449
 * §7.1): a real code + PKCE grant redeemed with a real proof on memory storage and a fake clock, then
 * the token validated with and without the proof the resource server received: its key, its `ath`,
 * its method and URL, a replay, a bearer token with a proof; introspection reports `cnf` (§6.2).
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { makeAuthn } from '../fixture.ts';
import { accessTokenHash, dpopNonceKey, issueDPoPNonce } from './dpop.ts';

const CB = 'https://rp.example/cb';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const ADMIN = { 'x-service-admin-secret': 'admin-secret' };
const API = 'https://api.example/docs/1';

interface Key { privateKey: CryptoKey; jwk: JWK }
const newKey = async (): Promise<Key> => {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: await exportJWK(publicKey) };
};
let jti = 0;

async function setup() {
  const a = makeAuthn();
  const { res } = await a.call('CreateClient', {
    name: 'rp', allowed_scopes: ['openid', 'email'], redirect_uris: [CB], grant_types: ['authorization_code'], is_first_party: true,
  }, ADMIN);
  const basic = { authorization: `Basic ${Buffer.from(`${res.client.client_id as string}:${res.client_secret as string}`).toString('base64')}` };
  const user = await a.signup('ada@example.com');
  const proof = (k: Key, claims: Record<string, unknown>) => new SignJWT({ jti: `j${++jti}`, iat: a.now(), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: k.jwk }).sign(k.privateKey);
  /** a code + PKCE grant redeemed with a proof by `k` (with the server's nonce): a DPoP-bound access token */
  const boundToken = async (k: Key, dpop = true): Promise<string> => {
    const auth = (await a.call('Authorize', { params: { client_id: res.client.client_id, redirect_uri: CB, response_type: 'code', scope: 'openid email', code_challenge: CHALLENGE, code_challenge_method: 'S256' }, method: 'GET' }, user.cookie)).res;
    const code = new URL(auth.location as string).searchParams.get('code')!;
    const nonce = issueDPoPNonce(dpopNonceKey(a.options.clientSecret), a.now());
    const headers = dpop ? { ...basic, dpop: await proof(k, { htm: 'POST', htu: `${a.options.url}/oauth/token`, nonce }) } : basic;
    const token = (await a.call('OauthToken', { params: { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: VERIFIER }, method: 'POST' }, headers)).res;
    expect(token.body.token_type).toBe(dpop ? 'DPoP' : 'Bearer');
    return token.body.access_token as string;
  };
  const validate = (token: string, dpop?: { proof: string; method?: string; url?: string }) => a.call('ValidateJwtToken', {
    token_type: 'access_token', token, ...(dpop ? { dpop_proof: dpop.proof, dpop_method: dpop.method ?? 'GET', dpop_url: dpop.url ?? API } : {}),
  });
  return { a, basic, proof, boundToken, validate };
}

describe('validate_jwt_token with a DPoP-bound access token (RFC 9449 §7.1)', () => {
  it('is valid with a proof by the bound key for the resource request (ath, htm, htu), once; refused without one', async () => {
    const { proof, boundToken, validate } = await setup();
    const k = await newKey();
    const token = await boundToken(k);
    const jkt = await calculateJwkThumbprint(k.jwk, 'sha256');
    await expect(validate(token)).rejects.toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('needs its DPoP proof') });
    const p = await proof(k, { htm: 'GET', htu: API, ath: accessTokenHash(token) });
    const ok = (await validate(token, { proof: p })).res;
    expect({ valid: ok.is_valid, cnf: ok.claims.cnf }).toEqual({ valid: true, cnf: { jkt } });
    // §11.1: the same proof twice is a replay
    await expect(validate(token, { proof: p })).rejects.toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('already used') });
  });

  it('refuses a proof by another key, for another token (ath), another method or URL, and a proof without method and URL', async () => {
    const { proof, boundToken, validate } = await setup();
    const k = await newKey();
    const token = await boundToken(k);
    const other = await newKey();
    await expect(validate(token, { proof: await proof(other, { htm: 'GET', htu: API, ath: accessTokenHash(token) }) }))
      .rejects.toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('another key') });
    await expect(validate(token, { proof: await proof(k, { htm: 'GET', htu: API, ath: accessTokenHash('another token') }) }))
      .rejects.toMatchObject({ message: expect.stringContaining('ath') });
    await expect(validate(token, { proof: await proof(k, { htm: 'GET', htu: API, ath: accessTokenHash(token) }), method: 'POST' }))
      .rejects.toMatchObject({ message: expect.stringContaining('htm') });
    await expect(validate(token, { proof: await proof(k, { htm: 'GET', htu: API, ath: accessTokenHash(token) }), url: 'https://api.example/other' }))
      .rejects.toMatchObject({ message: expect.stringContaining('htu') });
    await expect(validate(token, { proof: await proof(k, { htm: 'GET', htu: API, ath: accessTokenHash(token) }), url: 'not a url' }))
      .rejects.toMatchObject({ code: 'invalid_argument' });
  });

  it('a bearer token is valid without a proof and refused with one (the DPoP scheme needs a bound token)', async () => {
    const { proof, boundToken, validate } = await setup();
    const k = await newKey();
    const bearer = await boundToken(k, false);
    expect((await validate(bearer)).res).toMatchObject({ is_valid: true });
    expect((await validate(bearer)).res.claims).not.toHaveProperty('cnf');
    await expect(validate(bearer, { proof: await proof(k, { htm: 'GET', htu: API, ath: accessTokenHash(bearer) }) }))
      .rejects.toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('not DPoP-bound') });
  });

  it('introspection reports token_type DPoP and cnf.jkt for the resource server to check (RFC 9449 §6.2)', async () => {
    const { a, basic, boundToken } = await setup();
    const k = await newKey();
    const token = await boundToken(k);
    const res = (await a.call('OauthIntrospect', { params: { token }, method: 'POST' }, basic)).res;
    expect(res.body).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt: await calculateJwkThumbprint(k.jwk, 'sha256') } });
  });
});
