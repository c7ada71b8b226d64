/**
 * @module test/e2e/key-rotation
 * The key-rotation runbook of docs/operations.md, end to end (issue 32), all-in-one on SQLite: with
 * data sealed and MACed under one `--encryption-key` (a TOTP factor, an OAuth client secret, a SCIM
 * token, a SAML IdP signing key, an SSO connection's client secret), the process restarts with a new key
 * first and the old one second, and everything works; `gatehouse reseal` re-seals every value under the
 * new key and reports the counts; the process restarts with the new key alone, and everything still works.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { generate } from 'otplib';
import { ringOf } from '@gatehouse/crypto';
import { runGatehouse, selfSigned, startDeployment, type Deployment } from '@gatehouse/testing';
import { PASSWORD, address, cookieHeader, post, signup, sleep } from './email-support.ts';

/** The 6-digit TOTP code of `secret` at the next 30 s step (the replay guard refuses a step used before). */
async function nextTotp(secret: string): Promise<string> {
  await sleep(30_000 - (Date.now() % 30_000) + 250);
  return generate({ secret });
}

describe('key rotation: --encryption-key as a ring, gatehouse reseal, the old key dropped (all)', () => {
  let d: Deployment;
  let admin: Record<string, string>;
  const NEW = randomBytes(24).toString('base64url');
  const data = { email: '', totpSecret: '', clientId: '', clientSecret: '', scimToken: '', orgName: '' };

  beforeAll(async () => {
    d = await startDeployment('all', { mfa: true, readyTimeoutMs: 90_000 });
    admin = { 'x-service-admin-secret': d.adminSecret, origin: d.url };
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
  });

  /** Restarts the process with `--encryption-key=<keys>` in place of the key it ran with. */
  const setKeys = async (keys: string): Promise<void> => {
    await d.stopProcess('all');
    await d.startProcess('all', (flags) => [...flags.filter((f) => !f.startsWith('--encryption-key=')), `--encryption-key=${keys}`]);
  };

  /** Every sealed or MACed value of the data set in use: TOTP login, client_credentials, SCIM, SAML metadata. */
  async function everythingWorks(): Promise<void> {
    const login = await post(d.url, '/v1/login', { email: data.email, password: PASSWORD });
    expect(login.body.message).toBe('Proceed to mfa verification');
    const done = await post(d.url, '/v1/verify_otp', { otp: await nextTotp(data.totpSecret), is_totp: true, email: data.email }, cookieHeader(login.cookies));
    expect({ status: done.status, message: done.body.message }).toEqual({ status: 200, message: 'OTP verified successfully.' });

    const token = await fetch(`${d.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${data.clientId}:${data.clientSecret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' });

    const scim = await fetch(`${d.url}/scim/v2/Users`, { headers: { authorization: `Bearer ${data.scimToken}` } });
    expect(scim.status).toBe(200);

    const metadata = await fetch(`${d.url}/oauth/saml/${data.orgName}/idp/metadata`);
    expect(metadata.status).toBe(200);
    expect(await metadata.text()).toContain('X509Certificate');

    // the SAML connection's SP key signs its AuthnRequest (the sealed key opened)
    const samlLogin = await fetch(`${d.url}/oauth/saml/${data.orgName}/login`, { redirect: 'manual' });
    expect(samlLogin.status).toBe(302);
    expect(new URL(samlLogin.headers.get('location')!).searchParams.get('Signature')).toBeTruthy();
  }

  /** The sealed columns as stored: each value's key id (`v1` for a value sealed before rings). */
  function sealedKeyIds(): string[] {
    const db = new Database(d.databaseUrl, { readonly: true });
    try {
      const values = [
        ...db.prepare('select secret_sealed as v from mfa_totp').all(),
        ...db.prepare('select private_key_sealed as v from orgs_saml_idp_keys').all(),
        ...db.prepare('select client_secret_sealed as v from orgs_oidc_connections').all(),
        ...db.prepare('select sp_private_key_sealed as v from orgs_saml_connections').all(),
      ] as Array<{ v: string }>;
      return values.map(({ v }) => (v.startsWith('v2.') ? v.split('.')[1]! : 'v1'));
    } finally {
      db.close();
    }
  }

  it('rotates with data present: new key first, reseal, old key dropped; every factor, secret and token keeps working', async () => {
    // the data set, under the first key alone
    data.email = address('rotate');
    const up = await signup(d.url, data.email);
    data.totpSecret = up.body.authenticator_secret;
    const enrolled = await post(d.url, '/v1/verify_otp', { otp: await generate({ secret: data.totpSecret }), is_totp: true }, cookieHeader(up.cookies));
    expect(enrolled.body.message).toBe('OTP verified successfully.');
    const client = await post(d.url, '/v1/admin/create_client', { name: 'rotating workload', allowed_scopes: ['read:docs'], grant_types: ['client_credentials'] }, admin);
    expect(client.status).toBe(200);
    data.clientId = client.body.client.client_id;
    data.clientSecret = client.body.client_secret;
    data.orgName = `rotate-${randomBytes(4).toString('hex')}`;
    const org = await post(d.url, '/v1/admin/create_organization', { name: data.orgName }, admin);
    expect(org.status).toBe(200);
    const scim = await post(d.url, '/v1/admin/create_scim_endpoint', { org_id: org.body.id }, admin);
    expect(scim.status).toBe(200);
    data.scimToken = scim.body.token;
    const sp = await post(d.url, '/v1/admin/create_saml_service_provider', { org_id: org.body.id, name: 'sp', entity_id: 'https://sp.example/rotate', acs_url: 'https://sp.example/acs' }, admin);
    expect(sp.status).toBe(200);
    const oidc = await post(d.url, '/v1/admin/create_org_oidc_connection', { org_id: org.body.id, name: 'IdP', issuer_url: 'https://idp.example', client_id: 'cid', client_secret: 'upstream-secret' }, admin);
    expect(oidc.status).toBe(200);
    const samlConnection = await post(d.url, '/v1/admin/create_org_saml_connection', {
      org_id: org.body.id, name: 'SAML IdP', idp_entity_id: 'https://idp.example/saml', idp_sso_url: 'https://idp.example/sso', idp_certificate: selfSigned('idp.example').cert,
    }, admin);
    expect(samlConnection.status).toBe(200);
    const metadata = await fetch(`${d.url}/oauth/saml/${data.orgName}/idp/metadata`);
    expect(metadata.status).toBe(200);
    const oldId = ringOf(d.encryptionKey).keys[0].id;
    const newId = ringOf(NEW).keys[0].id;
    expect(sealedKeyIds().length).toBeGreaterThanOrEqual(4);
    expect(new Set(sealedKeyIds())).toEqual(new Set([oldId]));

    // 1. the new key first, the old one still in the ring; `gatehouse reseal` (here while the server is
    // stopped, so its own background resealer has not run yet) re-seals every value under the new key
    await d.stopProcess('all');
    const withKeys = (keys: string) => (flags: string[]): string[] => [...flags.filter((f) => !f.startsWith('--encryption-key=')), `--encryption-key=${keys}`];
    const flags = withKeys(`${NEW},${d.encryptionKey}`)(d.flagsOf('all'));
    const resealed = await runGatehouse('reseal', flags, 120_000);
    expect({ code: resealed.code, output: resealed.output }).toMatchObject({ code: 0 });
    const report = JSON.parse(resealed.output.trim().split('\n').pop()!) as { resealed: Record<string, Record<string, { resealed: number; unreadable: number }>>; unreadable: number };
    expect(report.unreadable).toBe(0);
    expect(report.resealed.mfa!['mfa_totp.secret_sealed']).toEqual({ resealed: 1, unreadable: 0 });
    expect(report.resealed.orgs!['orgs_saml_idp_keys.private_key_sealed']!.resealed).toBeGreaterThanOrEqual(1);
    expect(report.resealed.orgs!['orgs_oidc_connections.client_secret_sealed']).toEqual({ resealed: 1, unreadable: 0 });
    expect(report.resealed.orgs!['orgs_saml_connections.sp_private_key_sealed']).toEqual({ resealed: 1, unreadable: 0 });
    expect(new Set(sealedKeyIds())).toEqual(new Set([newId]));
    // a second run finds nothing left
    const again = JSON.parse((await runGatehouse('reseal', flags, 120_000)).output.trim().split('\n').pop()!) as typeof report;
    expect(Object.values(again.resealed).flatMap((c) => Object.values(c)).every((c) => c.resealed === 0 && c.unreadable === 0)).toBe(true);

    // 2. served with both keys: everything works (the client secret and the SCIM token, MACed under the
    // old key, verify and are re-MACed under the new one)
    await d.startProcess('all', withKeys(`${NEW},${d.encryptionKey}`));
    await everythingWorks();

    // 3. the old key dropped: everything still works (the client secret and SCIM token were re-MACed on use in step 2)
    await setKeys(NEW);
    await everythingWorks();
  }, 300_000);

  it('a ring without the key that sealed a value reports it as unreadable (exit 1), naming no value', async () => {
    const other = randomBytes(24).toString('base64url');
    const flags = d.flagsOf('all').filter((f) => !f.startsWith('--encryption-key=')).concat(`--encryption-key=${other}`);
    const res = await runGatehouse('reseal', flags, 120_000);
    expect(res.code).toBe(1);
    const report = JSON.parse(res.output.trim().split('\n').pop()!) as { unreadable: number };
    expect(report.unreadable).toBeGreaterThanOrEqual(3);
    expect(res.output).not.toContain(data.totpSecret);
  }, 120_000);
});
