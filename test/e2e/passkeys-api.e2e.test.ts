/**
 * @module test/e2e/passkeys-api
 * The passkey routes without a browser, both modes, on REST, GraphQL and native gRPC (behaviour.md
 * §4.3, §4.6): options, list and delete, and bad input (malformed `credential` JSON, over 64 KiB,
 * over-long names, wrong types) refused with 400 and the §4 messages, nothing stored. Real
 * ceremonies run in Chromium: passkeys.e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { address, bearer, post, signup } from './email-support.ts';

const INVALID_REGISTRATION = { code: 'invalid_argument', message: 'invalid passkey registration' };

describe.each(['all', 'split'] as Mode[])('passkey routes without a browser (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment(mode, { flags: ['--organization-name=Acme'] });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
  });

  const signedUp = async (tag: string): Promise<{ auth: { authorization: string }; userId: string }> => {
    const res = await signup(d.url, address(tag));
    expect(res.status).toBe(200);
    return { auth: bearer(res.body.access_token), userId: res.body.user.id };
  };
  const gql = async (query: string, variables: Record<string, unknown>, headers: Record<string, string>) => {
    const res = await fetch(`${d.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...headers }, body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: any; errors?: Array<{ message: string; extensions: { code: string } }> };
  };

  it('REST: creation options for a signed-in user (§4.6), usernameless request options, an empty list', async () => {
    const { auth, userId } = await signedUp('opts');
    const res = await post(d.url, '/v1/webauthn_registration_options', {}, auth);
    expect(res.status).toBe(200);
    const options = JSON.parse(res.body.options);
    expect(options).toMatchObject({
      rp: { id: '127.0.0.1', name: 'Acme' }, user: { id: Buffer.from(userId).toString('base64url') }, timeout: 300000, attestation: 'none',
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      pubKeyCredParams: [-7, -8, -257].map((alg) => ({ alg, type: 'public-key' })),
    });
    // mfa knows a signed-in caller by id only (the access token carries no email)
    expect(options.user.name).toBe(userId);
    // a fresh challenge each time, 32 bytes
    const again = JSON.parse((await post(d.url, '/v1/webauthn_registration_options', {}, auth)).body.options);
    expect(Buffer.from(again.challenge, 'base64url')).toHaveLength(32);
    expect(again.challenge).not.toBe(options.challenge);

    const login = await post(d.url, '/v1/webauthn_login_options', {});
    expect(login.status).toBe(200);
    expect(JSON.parse(login.body.options)).toMatchObject({ rpId: '127.0.0.1', allowCredentials: [], userVerification: 'required', timeout: 300000 });
    expect(await post(d.url, '/v1/webauthn_credentials', {}, auth)).toMatchObject({ status: 200, body: { webauthn_credentials: [] } });
    // the user routes need a user
    expect(await post(d.url, '/v1/webauthn_registration_options', {})).toMatchObject({ status: 401 });
    expect(await post(d.url, '/v1/webauthn_credentials', {})).toMatchObject({ status: 401, body: { code: 'unauthenticated', message: 'unauthorized' } });
  });

  it('REST: bad input is 400 with the §4 messages, and nothing is stored', async () => {
    const { auth } = await signedUp('bad');
    const cases: Array<[unknown, { code: string; message: string }]> = [
      [{ credential: '{not json' }, INVALID_REGISTRATION],
      [{ credential: '' }, INVALID_REGISTRATION],
      [{ credential: JSON.stringify({ id: 'x', type: 'public-key' }) }, INVALID_REGISTRATION],
      [{ credential: JSON.stringify({ id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'x'.repeat(70_000) } }) }, INVALID_REGISTRATION],
      [{ credential: JSON.stringify({ id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: Buffer.from(JSON.stringify({ challenge: 'unknown' })).toString('base64url') } }) }, INVALID_REGISTRATION],
      [{ credential: '{}', name: 'n'.repeat(65) }, { code: 'invalid_argument', message: 'name must be at most 64 characters' }],
    ];
    for (const [body, error] of cases) {
      expect(await post(d.url, '/v1/webauthn_registration_verify', body, auth)).toMatchObject({ status: 400, body: error });
    }
    // wrong types: the codec refuses before any handler
    for (const body of [{ credential: 42 }, { credential: { id: 'x' } }, { credential: '{}', name: ['a'] }]) {
      const res = await post(d.url, '/v1/webauthn_registration_verify', body, auth);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_argument');
    }
    expect(await post(d.url, '/v1/webauthn_login_verify', { credential: 'nope' })).toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'invalid passkey' } });
    expect(await post(d.url, '/v1/webauthn_delete_credential', { id: '' }, auth)).toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'id is required' } });
    expect(await post(d.url, '/v1/webauthn_delete_credential', { id: '00000000-0000-4000-8000-000000000000' }, auth))
      .toEqual(expect.objectContaining({ status: 404, body: { code: 'not_found', message: 'passkey not found' } }));
    expect((await post(d.url, '/v1/webauthn_credentials', {}, auth)).body).toEqual({ webauthn_credentials: [] });
  });

  it('GraphQL: the same operations under graphql.md names, the same messages', async () => {
    const { auth } = await signedUp('gql');
    const opts = await gql('mutation { webauthn_registration_options { options } }', {}, auth);
    expect(JSON.parse(opts.data.webauthn_registration_options.options)).toMatchObject({ rp: { id: '127.0.0.1' } });
    const login = await gql('mutation { webauthn_login_options { options } }', {}, {});
    expect(JSON.parse(login.data.webauthn_login_options.options)).toMatchObject({ allowCredentials: [] });
    expect(await gql('query { webauthn_credentials { id name transports created_at last_used_at } }', {}, auth)).toEqual({ data: { webauthn_credentials: [] } });
    const bad = await gql('mutation v($p: WebauthnRegistrationVerifyRequest!) { webauthn_registration_verify(params: $p) { message } }', { p: { credential: '{not json' } }, auth);
    expect(bad.errors).toEqual([expect.objectContaining({ message: 'invalid passkey registration', extensions: expect.objectContaining({ code: 'INVALID_ARGUMENT' }) })]);
    const long = await gql('mutation v($p: WebauthnRegistrationVerifyRequest!) { webauthn_registration_verify(params: $p) { message } }', { p: { credential: '{}', name: 'x'.repeat(65) } }, auth);
    expect(long.errors?.[0]).toMatchObject({ message: 'name must be at most 64 characters', extensions: { code: 'INVALID_ARGUMENT' } });
    const del = await gql('mutation { webauthn_delete_credential(id: "00000000-0000-4000-8000-000000000000") { message } }', {}, auth);
    expect(del.errors?.[0]).toMatchObject({ message: 'passkey not found', extensions: { code: 'NOT_FOUND' } });
    const unverified = await gql('mutation v($p: WebauthnLoginVerifyRequest!) { webauthn_login_verify(params: $p) { message } }', { p: { credential: '[]' } }, {});
    expect(unverified.errors?.[0]).toMatchObject({ message: 'invalid passkey', extensions: { code: 'INVALID_ARGUMENT' } });
  });

  it('native gRPC: MfaService options and list, AuthnService verify, the same refusals', async () => {
    const { auth } = await signedUp('grpc');
    const mfa = createGrpcClient(serviceDescriptor('mfa'), { address: d.grpcAddress });
    const authn = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    const ctx = () => createCallContext({ headers: auth, protocol: 'grpc' });
    try {
      const opts = await mfa.call('WebauthnRegistrationOptions', {}, ctx()) as { options: string };
      expect(JSON.parse(opts.options)).toMatchObject({ rp: { id: '127.0.0.1', name: 'Acme' }, timeout: 300000 });
      const login = await mfa.call('WebauthnLoginOptions', {}, createCallContext({ protocol: 'grpc' })) as { options: string };
      expect(JSON.parse(login.options)).toMatchObject({ allowCredentials: [] });
      expect(await mfa.call('WebauthnCredentials', {}, ctx())).toEqual({ webauthn_credentials: [] });
      expect(await authn.call('WebauthnRegistrationVerify', { credential: '{not json' }, ctx()).catch((e: unknown) => e)).toMatchObject(INVALID_REGISTRATION);
      expect(await authn.call('WebauthnLoginVerify', { credential: '{}' }, createCallContext({ protocol: 'grpc' })).catch((e: unknown) => e))
        .toMatchObject({ code: 'invalid_argument', message: 'invalid passkey' });
      expect(await mfa.call('WebauthnDeleteCredential', { id: 'nope' }, ctx()).catch((e: unknown) => e)).toMatchObject({ code: 'not_found', message: 'passkey not found' });
    } finally {
      mfa.close();
      authn.close();
    }
  });
});
