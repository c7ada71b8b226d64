/**
 * The OIDC relying party of an org connection (behaviour.md §6.3; OpenID Connect Core §3.1, RFC 7636)
 * against panva's `oidc-provider` over HTTPS with a test CA (libs/testing): our authorization request
 * carries state, nonce and an S256 challenge; the provider's own login and consent pages are walked
 * by HTTP; the callback's code exchange and ID token give the identity. A reused state, a foreign
 * state and the IdP's error answer are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Agent, fetch as undiciFetch } from 'undici';
import { caAndServer, startOidcIdp, type TestOidcIdp } from '@gatehouse/testing';
import type { OrganizationRecord } from '../storage/ports.ts';
import { createOidcConnection, ssoUrls } from './connections.ts';
import { oidcCallback, oidcLoginUrl } from './oidc.ts';
import { openSsoScratch, type SsoScratch } from './scratch.ts';
import type { OidcConnectionRecord } from './storage/ports.ts';

const tls = caAndServer();
const agent = new Agent({ connect: { ca: tls.ca.cert } });
const httpsFetch = (url: string, init: RequestInit = {}): Promise<Response> =>
  undiciFetch(url, { ...(init as object), dispatcher: agent }) as unknown as Promise<Response>;

let s: SsoScratch;
let idp: TestOidcIdp;
let org: OrganizationRecord;
let conn: OidcConnectionRecord;

beforeAll(async () => {
  s = await openSsoScratch('sqlite');
  s.d.idpFetch = httpsFetch;
  const orgId = await s.newOrg();
  org = (await s.d.orgs.organizations.get(orgId))!;
  idp = await startOidcIdp(tls.server, [{ client_id: 'rp', client_secret: 'rp-secret', redirect_uris: [ssoUrls(s.d, org.name).oidcCallback] }]);
  conn = await createOidcConnection(s.d, { orgId, name: 'oidc-provider', issuerUrl: idp.issuer, clientId: 'rp', clientSecret: 'rp-secret' });
}, 30_000);
afterAll(async () => {
  await idp?.close();
  await agent.close();
  await s?.close();
});

/** Walks the provider's login and consent pages as a browser would; returns the callback's query. */
async function signInAt(authorizeUrl: string, login: string): Promise<Record<string, string>> {
  const jar = new Map<string, string>();
  let url = authorizeUrl;
  let form: Record<string, string> | null = null;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(s.d.baseUrl)) return Object.fromEntries(new URL(url).searchParams);
    const res = await httpsFetch(url, {
      method: form ? 'POST' : 'GET', redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    form = null;
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).toString();
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no form at ${url}: ${res.status}`);
    url = new URL(action, url).toString();
    form = html.includes('name="login"') ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' };
  }
  throw new Error('too many hops');
}

describe('org OIDC SSO (openid-client against oidc-provider)', () => {
  it('logs a user in: PKCE S256, state and nonce; the ID token gives the identity and the app parameters', async () => {
    const url = new URL(await oidcLoginUrl(s.d, org, conn, { redirect_uri: 'https://app.example.com/cb', state: 'app' }));
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toBe('openid profile email');
    expect(url.searchParams.get('nonce')).toBeTruthy();
    const query = await signInAt(url.toString(), 'ada@corp.example.com');
    const login = await oidcCallback(s.d, org, conn, query);
    expect(login).toEqual({
      identity: { issuer: idp.issuer, subject: 'ada@corp.example.com', email: 'ada@corp.example.com', emailVerified: true, givenName: 'Ida', familyName: 'Provider' },
      params: { redirect_uri: 'https://app.example.com/cb', state: 'app' },
    });
    // the state is single use
    await expect(oidcCallback(s.d, org, conn, query)).rejects.toThrow('SSO login failed: unknown or expired login');
  });

  it('refuses an unknown state and the IdP\'s error answer', async () => {
    await expect(oidcCallback(s.d, org, conn, { state: randomUUID(), code: 'x' })).rejects.toThrow('SSO login failed: unknown or expired login');
    const url = new URL(await oidcLoginUrl(s.d, org, conn, {}));
    await expect(oidcCallback(s.d, org, conn, { state: url.searchParams.get('state')!, error: 'access_denied' }))
      .rejects.toThrow('SSO login failed: the identity provider answered access_denied');
  });

  it('refuses a code that was not issued for our request', async () => {
    const url = new URL(await oidcLoginUrl(s.d, org, conn, {}));
    await expect(oidcCallback(s.d, org, conn, { state: url.searchParams.get('state')!, code: 'forged-code', iss: idp.issuer }))
      .rejects.toThrow('SSO login failed: the code exchange or ID token was refused');
  });
});
