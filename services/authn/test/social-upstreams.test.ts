/**
 * authn's social login against the ten providers' stand-ins (issue 20), in process: SocialLogin and
 * SocialCallback called as the gateway calls them, the browser legs at the stand-ins (oidc-provider for
 * the OIDC providers, the documented OAuth 2.0 endpoints of the others) followed with a cookie jar.
 * Both deployment modes run the same flow in test/e2e/social-login.e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { URL_, makeAuthn } from '../src/fixture.ts';
import type { AuthnOptions } from '../src/domain/options.ts';
import {
  Jar, MICROSOFT_TENANT, OAUTH2_PROVIDERS, OIDC_PROVIDERS, formPost, startOauth2Standin, startOidcStandin, visit, type Standin, type StandinAccount,
} from '../../../test/support/social-standins.ts';

const standins = new Map<string, Standin>();
let a: ReturnType<typeof makeAuthn>;

beforeAll(async () => {
  for (const p of OIDC_PROVIDERS) standins.set(p, await startOidcStandin(p));
  for (const p of OAUTH2_PROVIDERS) standins.set(p, await startOauth2Standin(p));
  const over: Record<string, unknown> = { microsoftTenantId: MICROSOFT_TENANT };
  for (const s of standins.values()) {
    s.redirectUris.push(`${URL_}/oauth_callback/${s.provider}`);
    over[`${s.provider}ClientId`] = s.clientId;
    over[`${s.provider}ClientSecret`] = s.clientSecret;
    over[`${s.provider}BaseUrl`] = s.baseUrl;
  }
  a = makeAuthn(over as Partial<AuthnOptions>);
}, 30_000);
afterAll(async () => {
  for (const s of standins.values()) await s.close();
});

/** Runs one login as `account`: SocialLogin, the stand-in's redirects, SocialCallback; the final Location's query. */
async function login(provider: string, account: StandinAccount, tamper: { state?: boolean; nonce?: boolean; plainCookie?: boolean } = {}) {
  const s = standins.get(provider)!;
  s.next = account;
  const start = await a.call('SocialLogin', { provider, redirect_uri: `${URL_}/app/done`, state: 'cs' });
  // plainCookie: the pending login comes back without its __Host- prefix, as a sibling domain could plant it
  const pair = (c: string) => (tamper.plainCookie ? c.split(';')[0]!.replace(/^__Host-/, '') : c.split(';')[0]!);
  const cookie = { cookie: start.cookies.map(pair).join('; ') };
  let url: string = start.res.redirect_url;
  if (tamper.nonce) {
    const u = new URL(url);
    u.searchParams.set('nonce', 'attacker-chosen-nonce');
    url = u.href;
  }
  const jar = new Jar();
  let params: Record<string, string> | null = null;
  let res = await visit(jar, url);
  for (let hop = 0; hop < 20 && !params; hop++) {
    if (res.location?.startsWith(`${URL_}/oauth_callback/`)) {
      params = Object.fromEntries(new URL(res.location).searchParams);
    } else if (res.location) {
      res = await visit(jar, res.location);
    } else {
      const form = formPost(res.body);
      if (!form) throw new Error(`unexpected ${res.status}: ${res.body.slice(0, 200)}`);
      params = Object.fromEntries(form.fields);
      params.user = JSON.stringify({ name: { firstName: 'Apple', lastName: 'Seed' } });
    }
  }
  if (tamper.state) params!.state = 'tampered';
  const done = await a.call('SocialCallback', { provider, ...params }, cookie);
  return { q: Object.fromEntries(new URL(done.res.redirect_url).searchParams), cookies: done.cookies };
}

describe('social login against the providers\' stand-ins', () => {
  it.each(['google', 'github', 'facebook', 'microsoft', 'apple', 'linkedin', 'discord', 'twitter', 'twitch', 'roblox'])('%s: creates the user, then finds it by subject', async (provider) => {
    const sub = `${Date.now()}${Math.floor(Math.random() * 1000)}`;
    const email = ['twitter', 'roblox'].includes(provider) ? null : `${provider}-${sub}@example.com`;
    const account = { sub, email, email_verified: provider === 'apple' ? 'true' : true, given_name: 'Grace', family_name: 'Hopper', name: 'Grace Hopper', nickname: `g${sub}`, picture: 'https://img.example/g.png' };
    const first = await login(provider, account);
    expect(first.q.error_description).toBeUndefined();
    const claims = decodeJwt(first.q.access_token!);
    expect(claims).toMatchObject({ login_method: provider });
    const user = (await a.storage.users.findById(String(claims.sub)))!;
    expect(user).toMatchObject({ email, signupMethods: provider });
    // Twitch's email comes from Helix, which does not say it is verified
    expect(user.emailVerifiedAt !== null).toBe(email !== null && provider !== 'twitch');
    if (provider === 'apple') expect(user).toMatchObject({ givenName: 'Apple', familyName: 'Seed' });
    if (provider === 'twitch') expect(user).toMatchObject({ nickname: 'Grace Hopper', picture: 'https://img.example/g.png' });
    const again = await login(provider, { ...account, email: email ? `new-${email}` : null });
    expect(decodeJwt(again.q.access_token!).sub).toBe(claims.sub);
  }, 30_000);

  it('refuses a tampered state and a tampered nonce', async () => {
    const acct = (p: string) => ({ sub: `t${Date.now()}`, email: `${p}-t${Date.now()}@example.com`, email_verified: true });
    expect((await login('google', acct('google'), { state: true })).q).toEqual({ error: 'unauthenticated', error_description: 'google login failed: invalid state', state: 'cs' });
    expect((await login('github', acct('github'), { state: true })).q.error_description).toBe('github login failed: invalid state');
    // Secure (the fixture's --app-cookie-secure): the cookie is __Host-gatehouse_social, and only that name is read (issue 30 §7)
    expect((await login('github', acct('github'), { plainCookie: true })).q.error_description).toBe('github login failed: the login expired or was started in another browser');
    const nonce = await login('google', acct('google'), { nonce: true });
    expect(nonce.q.error).toBe('unauthenticated');
    expect(nonce.q.error_description).toMatch(/^google login failed: .*nonce/);
    // behaviour.md §5.7: each start and each outcome is in the audit log
    const actions = a.storage.published.filter((e) => e.name === 'audit.recorded').map((e) => (e.data as { action: string }).action);
    expect(actions.filter((x) => x === 'oauth.login_initiated').length).toBe(actions.filter((x) => x.startsWith('oauth.callback_')).length);
    expect(actions.slice(-8)).toEqual([
      'oauth.login_initiated', 'oauth.callback_failed', 'oauth.login_initiated', 'oauth.callback_failed',
      'oauth.login_initiated', 'oauth.callback_failed', 'oauth.login_initiated', 'oauth.callback_failed',
    ]);
  }, 30_000);
});
