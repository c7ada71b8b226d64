/**
 * @module @gatehouse/authn/domain/dpop.test
 * The DPoP proof check (RFC 9449 §4.3) with real proofs signed by jose keys, the memory storage's
 * `useJti` as the replay store, and a fixed clock: what is accepted, each refusal, the server nonce
 * (§8) and the `ath` of resource requests (§4.2).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, generateSecret, SignJWT, type CryptoKey, type JWK } from 'jose';
import { createMemoryOAuthStore } from '../storage/memory-oauth.ts';
import {
  DPOP_IAT_WINDOW_SECONDS, DPOP_NONCE_TTL_SECONDS, DPoPProofError, accessTokenHash, checkDPoPProof, dpopNonceKey, dpopNonceValid, issueDPoPNonce,
  type ProofExpectation,
} from './dpop.ts';

const NOW = 1_900_000_000;
const HTU = 'https://id.example.com/oauth/token';
const key = dpopNonceKey('shared-secret');

interface Signer { privateKey: CryptoKey; jwk: JWK; alg: string }

async function signer(alg: string): Promise<Signer> {
  const { publicKey, privateKey } = await generateKeyPair(alg, alg.startsWith('RS') || alg.startsWith('PS') ? { modulusLength: 2048 } : {});
  return { privateKey, jwk: await exportJWK(publicKey), alg };
}

let jtiCounter = 0;

/** A proof by `s` for POST {@link HTU} at {@link NOW} with a current nonce; `claims`/`header` override. */
function proof(s: Signer, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ jti: `jti-${++jtiCounter}`, htm: 'POST', htu: HTU, iat: NOW, nonce: issueDPoPNonce(key, NOW - 10), ...claims })
    .setProtectedHeader({ alg: s.alg, typ: 'dpop+jwt', jwk: s.jwk, ...header })
    .sign(s.privateKey);
}

function expectation(over: Partial<ProofExpectation> = {}): ProofExpectation {
  const store = createMemoryOAuthStore();
  return { htm: 'POST', htu: HTU, now: NOW, nonceKey: key, useJti: (k, e, n) => store.useJti(k, e, n), ...over };
}

async function refusal(p: Promise<unknown>): Promise<DPoPProofError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(DPoPProofError);
  return err as DPoPProofError;
}

describe('checkDPoPProof (RFC 9449 §4.3)', () => {
  let es: Signer;
  beforeAll(async () => { es = await signer('ES256'); });

  it.each(['ES256', 'PS256', 'EdDSA'])('accepts a %s proof and answers its key\'s RFC 7638 thumbprint', async (alg) => {
    const s = alg === 'ES256' ? es : await signer(alg);
    const out = await checkDPoPProof(await proof(s), expectation());
    expect(out.jkt).toBe(await calculateJwkThumbprint(s.jwk, 'sha256'));
  });

  it('ignores the query and fragment of htu and normalises scheme and host case (§4.3 (9))', async () => {
    await expect(checkDPoPProof(await proof(es, { htu: 'HTTPS://ID.example.com/oauth/token?x=1#f' }), expectation())).resolves.toBeDefined();
  });

  it('refuses a replayed proof (same jti, same key) within the window, across calls on one store', async () => {
    const exp = expectation();
    const p = await proof(es);
    await checkDPoPProof(p, exp);
    const err = await refusal(checkDPoPProof(p, { ...exp, now: NOW + 30 }));
    expect(err.error).toBe('invalid_dpop_proof');
    expect(err.message).toMatch(/already used/);
  });

  it('refuses a missing header, a non-JWT and two proofs in one header', async () => {
    expect((await refusal(checkDPoPProof(undefined, expectation()))).message).toMatch(/required/);
    expect((await refusal(checkDPoPProof('not a jwt', expectation()))).error).toBe('invalid_dpop_proof');
    const two = `${await proof(es)}, ${await proof(es)}`;
    expect((await refusal(checkDPoPProof(two, expectation()))).error).toBe('invalid_dpop_proof');
  });

  it('refuses a wrong typ, an alg off the list (HS256), a private jwk and a signature by another key', async () => {
    expect((await refusal(checkDPoPProof(await proof(es, {}, { typ: 'JWT' }), expectation()))).message).toMatch(/typ/);
    const secret = await generateSecret('HS256');
    const hs = await new SignJWT({ jti: 'h', htm: 'POST', htu: HTU, iat: NOW }).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: es.jwk }).sign(secret);
    expect((await refusal(checkDPoPProof(hs, expectation()))).message).toMatch(/alg/);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    expect((await refusal(checkDPoPProof(await proof(es, {}, { jwk: privateJwk }), expectation()))).message).toMatch(/public key/);
    const other = await signer('ES256');
    expect((await refusal(checkDPoPProof(await proof(other, {}, { jwk: es.jwk }), expectation()))).message).toMatch(/signature/);
  });

  it('refuses a wrong htm, a wrong htu, and a missing jti', async () => {
    expect((await refusal(checkDPoPProof(await proof(es, { htm: 'GET' }), expectation()))).message).toMatch(/htm/);
    expect((await refusal(checkDPoPProof(await proof(es, { htu: 'https://id.example.com/userinfo' }), expectation()))).message).toMatch(/htu/);
    expect((await refusal(checkDPoPProof(await proof(es, { htu: 'https://evil.example/oauth/token' }), expectation()))).message).toMatch(/htu/);
    expect((await refusal(checkDPoPProof(await proof(es, { jti: undefined }), expectation()))).message).toMatch(/jti/);
  });

  it(`accepts iat within ±${DPOP_IAT_WINDOW_SECONDS} s and refuses it outside`, async () => {
    await expect(checkDPoPProof(await proof(es, { iat: NOW - DPOP_IAT_WINDOW_SECONDS }), expectation())).resolves.toBeDefined();
    await expect(checkDPoPProof(await proof(es, { iat: NOW + DPOP_IAT_WINDOW_SECONDS }), expectation())).resolves.toBeDefined();
    expect((await refusal(checkDPoPProof(await proof(es, { iat: NOW - DPOP_IAT_WINDOW_SECONDS - 1 }), expectation()))).message).toMatch(/iat/);
    expect((await refusal(checkDPoPProof(await proof(es, { iat: NOW + DPOP_IAT_WINDOW_SECONDS + 1 }), expectation()))).message).toMatch(/iat/);
  });

  it('asks for a nonce (use_dpop_nonce with a fresh one) when it is missing, forged or stale (§8)', async () => {
    for (const nonce of [undefined, 'abc.def', `${NOW.toString(36)}.${'A'.repeat(32)}`, issueDPoPNonce(key, NOW - DPOP_NONCE_TTL_SECONDS - 1), issueDPoPNonce(dpopNonceKey('other'), NOW)]) {
      const err = await refusal(checkDPoPProof(await proof(es, { nonce }), expectation()));
      expect(err.error).toBe('use_dpop_nonce');
      expect(err.nonce).not.toBeNull();
      expect(dpopNonceValid(key, err.nonce!, NOW)).toBe(true);
      // the proof with the nonce given is accepted
      await expect(checkDPoPProof(await proof(es, { nonce: err.nonce }), expectation())).resolves.toBeDefined();
    }
  });

  it('nonces hold no state: another replica with the same secret accepts one, another secret does not', () => {
    const n = issueDPoPNonce(dpopNonceKey('shared-secret'), NOW);
    expect(dpopNonceValid(dpopNonceKey('shared-secret'), n, NOW + DPOP_NONCE_TTL_SECONDS)).toBe(true);
    expect(dpopNonceValid(dpopNonceKey('shared-secret'), n, NOW + DPOP_NONCE_TTL_SECONDS + 1)).toBe(false);
    expect(dpopNonceValid(dpopNonceKey('not-it'), n, NOW)).toBe(false);
  });

  it('checks ath against the access token presented with the proof (§4.3 (12))', async () => {
    const at = 'eyJhbGciOiJFUzI1NiJ9.e30.sig';
    const exp = expectation({ htm: 'GET', htu: 'https://id.example.com/userinfo', accessToken: at });
    const base = { htm: 'GET', htu: 'https://id.example.com/userinfo' };
    await expect(checkDPoPProof(await proof(es, { ...base, ath: accessTokenHash(at) }), exp)).resolves.toBeDefined();
    expect((await refusal(checkDPoPProof(await proof(es, { ...base, ath: accessTokenHash('another') }), exp))).message).toMatch(/ath/);
    expect((await refusal(checkDPoPProof(await proof(es, base), exp))).message).toMatch(/ath/);
  });
});
