/**
 * @module @gatehouse/authn/domain/oauth-assertion.test
 * private_key_jwt client assertions (RFC 7523 §3) through authn's RPCs on memory storage and a fake
 * clock, against a real JWKS server on 127.0.0.1: a jti is refused a second time for as long as the
 * assertion itself is accepted, i.e. also within the clock tolerance past its `exp` (issue 18, 23).
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { makeAuthn } from '../fixture.ts';
import { ASSERTION_CLOCK_TOLERANCE_SECONDS, JWT_BEARER_ASSERTION } from './oauth-client-auth.ts';

const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

describe('private_key_jwt assertion replay (RFC 7523 §3 item 7)', () => {
  let server: http.Server;
  let jwksUrl: string;
  let sign: (claims: Record<string, unknown>) => Promise<string>;
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    server = http.createServer((req, res) => {
      if (req.url === '/jwks.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    sign = (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(privateKey);
  });
  afterAll(() => new Promise<void>((resolve) => { server.close(() => resolve()); }));

  it('a used jti is refused past exp while the clock tolerance still accepts the assertion, and the assertion itself is refused after', async () => {
    const a = makeAuthn();
    const aud = 'https://auth.example.com/oauth/token';
    const sa = (await a.call('CreateClient', { name: 'workload', allowed_scopes: ['read:docs'], grant_types: ['client_credentials'] }, ADMIN)).res;
    const saId = sa.client.client_id as string;
    const issuer = await a.call('AddTrustedIssuer', {
      service_account_id: saId, name: 'test issuer', issuer_url: jwksUrl, key_source_type: 'static_jwks_url', jwks_url: `${jwksUrl}/jwks.json`,
      expected_aud: aud, issuer_type: 'oidc', allowed_subjects: 'workload-a',
    }, ADMIN);
    expect(issuer.res.id).toBeTruthy();
    const exp = a.now() + 30;
    const assertion = await sign({ iss: jwksUrl, sub: 'workload-a', aud, jti: 'jti-1', exp });
    const grant = async () => (await a.call('OauthToken', {
      method: 'POST', params: { grant_type: 'client_credentials', client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: assertion },
    })).res as { status: number; body: Record<string, unknown> };
    const first = await grant();
    expect(first.status).toBe(200);
    // past exp, inside the tolerance: the assertion is still accepted by the signature check, its jti is not
    a.advance(exp - a.now() + ASSERTION_CLOCK_TOLERANCE_SECONDS - 2);
    expect(await grant()).toMatchObject({ status: 401, body: { error: 'invalid_client', error_description: 'client assertion replayed' } });
    // past the tolerance: refused as expired, before the jti is looked at
    a.advance(3);
    const late = await grant();
    expect(late).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(String(late.body.error_description)).toMatch(/exp/);
  });
});
