/**
 * @module test/e2e/social-login
 * Social login with the ten providers end to end in both modes (issue 20; behaviour.md §3.1, §4.1,
 * §5.7, §8): `GET /oauth_login/<provider>` → the provider's stand-in (panva's oidc-provider for the
 * OpenID Connect providers, the documented endpoints of GitHub, Facebook, Discord and Twitter) →
 * `/oauth_callback/<provider>` → tokens on the redirect_uri. The redirects are followed with fetch and
 * a cookie jar, as a browser would (Apple's form_post page is submitted as its form says).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { generate } from 'otplib';
import { startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { PASSWORD, address, bearer, get, post, signup } from './email-support.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';
import {
  Jar, OAUTH2_PROVIDERS, OIDC_PROVIDERS, formPost, standinFlags, startOauth2Standin, startOidcStandin, visit, type Standin, type StandinAccount,
} from '../support/social-standins.ts';

const PROVIDERS = ['google', 'github', 'facebook', 'microsoft', 'apple', 'linkedin', 'discord', 'twitter', 'twitch', 'roblox'];
/** providers whose stand-in answers no email (Twitter v2 users/me; Roblox with its default scopes) */
const NO_EMAIL = ['twitter', 'roblox'];

interface LoginOptions {
  /** replace the `state` the provider returns to the callback */
  tamperState?: boolean;
  /** replace the `nonce` of the authorization request on its way to the provider */
  tamperNonce?: boolean;
  jar?: Jar;
  query?: Record<string, string>;
}

interface LoginResult {
  /** the query of the final redirect to `<url>/app/done` */
  q: Record<string, string>;
  /** Set-Cookie values of the callback's answer */
  cookies: string[];
  jar: Jar;
}

/** A browser login at `d` through the stand-in `s` as `account`, redirects followed to `<url>/app/done`. */
async function socialLogin(d: Deployment, s: Standin, account: StandinAccount, o: LoginOptions = {}): Promise<LoginResult> {
  s.next = account;
  const jar = o.jar ?? new Jar();
  const done = `${d.url}/app/done`;
  const q = new URLSearchParams({ redirect_uri: done, state: 'client-state', ...o.query });
  let url = `${d.url}/oauth_login/${s.provider}?${q}`;
  let res = await visit(jar, url);
  for (let hop = 0; hop < 20; hop++) {
    if ((res.status === 302 || res.status === 303) && res.location) {
      let next = res.location;
      if (next.startsWith(done)) return { q: Object.fromEntries(new URL(next).searchParams), cookies: res.setCookies, jar };
      if (o.tamperNonce && url.startsWith(`${d.url}/oauth_login/`)) {
        const u = new URL(next);
        expect(u.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
        u.searchParams.set('nonce', 'attacker-chosen-nonce');
        next = u.href;
      }
      if (o.tamperState && next.startsWith(`${d.url}/oauth_callback/`)) {
        const u = new URL(next);
        u.searchParams.set('state', 'tampered-state');
        next = u.href;
      }
      url = next;
      res = await visit(jar, url);
      continue;
    }
    const form = res.status === 200 ? formPost(res.body) : null;
    if (form) {
      // response_mode=form_post (Apple): the page posts the answer to the callback
      form.fields.set('user', JSON.stringify({ name: { firstName: 'Apple', lastName: 'Seed' }, email: account.email }));
      if (o.tamperState) form.fields.set('state', 'tampered-state');
      url = form.action;
      res = await visit(jar, url, { method: 'POST', form: form.fields });
      continue;
    }
    throw new Error(`unexpected ${res.status} at ${url}: ${res.body.slice(0, 300)}`);
  }
  throw new Error('too many redirects');
}

const uniq = (): string => `${Date.now()}${Math.floor(Math.random() * 1e6)}`;

/** A fresh account of `provider`'s stand-in (GitHub, Discord and Twitter ids are numeric). */
function accountFor(provider: string, over: Partial<StandinAccount> = {}): StandinAccount {
  const id = uniq();
  return {
    sub: id,
    email: NO_EMAIL.includes(provider) ? null : address(provider),
    email_verified: provider === 'apple' ? 'true' : true,
    given_name: 'Grace', family_name: 'Hopper', name: 'Grace Hopper', nickname: `grace${id}`, picture: 'https://img.example/grace.png',
    ...over,
  };
}

describe.each(['all', 'split'] as Mode[])('social login (%s)', (mode) => {
  const standins = new Map<string, Standin>();
  let rx: Receiver;
  let d: Deployment;
  let gated: Deployment;

  beforeAll(async () => {
    for (const p of OIDC_PROVIDERS) standins.set(p, await startOidcStandin(p));
    for (const p of OAUTH2_PROVIDERS) standins.set(p, await startOauth2Standin(p));
    rx = await startReceiver();
    const all = [...standins.values()].flatMap(standinFlags);
    d = await startDeployment(mode, { flags: [...all, '--allow-private-webhook-targets'], readyTimeoutMs: 90_000 });
    // MFA on, only Google enabled: the gate after a social login, and a disabled provider
    gated = await startDeployment(mode, { mfa: true, flags: standinFlags(standins.get('google')!), readyTimeoutMs: 90_000 });
    for (const s of standins.values()) s.redirectUris.push(`${d.url}/oauth_callback/${s.provider}`, `${gated.url}/oauth_callback/${s.provider}`);
    const admin = { 'x-service-admin-secret': d.adminSecret };
    for (const event of ['user.created', 'user.signup', 'user.login']) {
      const res = await post(d.url, '/v1/admin/add_webhook', { event_name: event, endpoint: `${rx.url}/${event}` }, admin);
      expect(res.status).toBe(200);
    }
  }, 300_000);
  afterAll(async () => {
    await d?.stop();
    await gated?.stop();
    await rx?.close();
    for (const s of standins.values()) await s.close();
  });

  /** Waits until `count` deliveries of `event` for `userId` arrived (30 s at most); returns them. */
  async function events(event: string, userId: string, count: number): Promise<unknown[]> {
    const mine = () => rx.at(`/${event}`).filter((r) => r.body?.user?.id === userId);
    const deadline = Date.now() + 30_000;
    while (mine().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    return mine();
  }

  it.each(PROVIDERS)('%s: the first login creates the user (user.created, user.signup, user.login); the next one is the same user', async (provider) => {
    const s = standins.get(provider)!;
    const account = accountFor(provider);
    const first = await socialLogin(d, s, account);
    expect(first.q).toMatchObject({ token_type: 'bearer', state: 'client-state' });
    expect(first.q.error).toBeUndefined();
    const claims = decodeJwt(first.q.access_token!);
    expect(claims.login_method).toBe(provider);
    const userId = String(claims.sub);
    expect(first.cookies.map((c) => c.split('=')[0])).toEqual(expect.arrayContaining(['gatehouse_social', 'cookie_session', 'cookie_session_domain']));
    // the pending login is single use: cleared by the callback
    expect(first.jar.get(d.url, 'gatehouse_social')).toBeUndefined();
    const profile = await get(d.url, '/v1/profile', bearer(first.q.access_token!));
    expect(profile.body).toMatchObject({ id: userId, signup_methods: provider, email: account.email ?? null });
    // Twitch's email comes from Helix, which does not say it is verified
    if (account.email) expect(profile.body.email_verified).toBe(provider !== 'twitch');
    if (provider === 'apple') expect(profile.body).toMatchObject({ given_name: 'Apple', family_name: 'Seed' });
    if (provider === 'github') expect(profile.body).toMatchObject({ nickname: account.nickname, picture: account.picture });

    // the same upstream user again, with another email upstream: resolved by its subject
    const again = await socialLogin(d, s, { ...account, email: account.email ? address(`${provider}-new`) : null });
    expect(again.q.error).toBeUndefined();
    expect(decodeJwt(again.q.access_token!).sub).toBe(userId);
    expect(await events('user.created', userId, 1)).toHaveLength(1);
    expect(await events('user.signup', userId, 1)).toHaveLength(1);
    expect(await events('user.login', userId, 2)).toHaveLength(2);
  }, 120_000);

  it('links an existing account only on a verified upstream email (google, github)', async () => {
    for (const provider of ['google', 'github']) {
      const email = address(`link-${provider}`);
      const signed = await signup(d.url, email);
      expect(signed.status).toBe(200);
      const { q } = await socialLogin(d, standins.get(provider)!, accountFor(provider, { email, email_verified: true }));
      expect(q.error).toBeUndefined();
      expect(decodeJwt(q.access_token!).sub).toBe(signed.body.user.id);
      expect((await get(d.url, '/v1/profile', bearer(q.access_token!))).body.signup_methods).toBe(`basic_auth,${provider}`);
      // the password still works
      expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).status).toBe(200);
    }
  }, 120_000);

  it('refuses an unverified upstream email that an existing account holds, and links nothing (github, discord, google)', async () => {
    for (const provider of ['github', 'discord', 'google']) {
      const email = address(`unverified-${provider}`);
      const signed = await signup(d.url, email);
      const account = accountFor(provider, { email, email_verified: false });
      const { q, cookies } = await socialLogin(d, standins.get(provider)!, account);
      expect(q).toEqual({
        error: 'failed_precondition', state: 'client-state',
        error_description: 'an account with this email already exists and the identity provider did not verify the email; sign in to that account another way',
      });
      expect(cookies.some((c) => c.startsWith('cookie_session='))).toBe(false);
      // nothing was linked: the same upstream user is refused again, and the account is unchanged
      expect((await socialLogin(d, standins.get(provider)!, account)).q.error).toBe('failed_precondition');
      const login = await post(d.url, '/v1/login', { email, password: PASSWORD });
      expect(login.body.user).toMatchObject({ id: signed.body.user.id, signup_methods: 'basic_auth' });
    }
  }, 120_000);

  it('refuses a tampered state (google, github, apple form_post) and a tampered nonce (google, microsoft)', async () => {
    for (const provider of ['google', 'github', 'apple']) {
      const account = accountFor(provider);
      const { q, cookies } = await socialLogin(d, standins.get(provider)!, account, { tamperState: true });
      expect(q).toEqual({ error: 'unauthenticated', error_description: `${provider} login failed: invalid state`, state: 'client-state' });
      expect(cookies.some((c) => c.startsWith('cookie_session='))).toBe(false);
    }
    for (const provider of ['google', 'microsoft']) {
      const { q } = await socialLogin(d, standins.get(provider)!, accountFor(provider), { tamperNonce: true });
      expect(q.error).toBe('unauthenticated');
      expect(q.error_description).toMatch(new RegExp(`^${provider} login failed: .*nonce`));
      expect(q.access_token).toBeUndefined();
    }
    // a callback without the pending login (another browser) is refused
    const stray = await visit(new Jar(), `${d.url}/oauth_callback/github?code=abc&state=xyz`);
    expect(stray.status).toBe(302);
    expect(Object.fromEntries(new URL(stray.location!).searchParams)).toEqual({
      error: 'unauthenticated', error_description: 'github login failed: the login expired or was started in another browser',
    });
  }, 120_000);

  it('answers {code, message} 4xx for an unknown or disabled provider and a bad redirect_uri or role', async () => {
    expect(await get(d.url, '/oauth_login/myspace')).toMatchObject({ status: 404, body: { code: 'not_found', message: 'unknown social provider: myspace' } });
    expect(await get(d.url, '/oauth_callback/myspace?code=x')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    expect(await get(gated.url, '/oauth_login/github')).toMatchObject({ status: 400, body: { code: 'failed_precondition', message: 'github login is not enabled for this instance' } });
    expect(await get(d.url, '/oauth_login/google?redirect_uri=https://evil.example.net/')).toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'invalid redirect URI' } });
    expect(await get(d.url, '/oauth_login/google?roles=admin')).toMatchObject({ status: 400, body: { code: 'invalid_argument', message: 'invalid roles' } });
  }, 60_000);

  it('the MFA gate after a social login: a TOTP user gets mfa_gate=verify and the mfa cookie; a new user the offer', async () => {
    const email = address('gate');
    const offered = await signup(gated.url, email);
    const mfa = { cookie: offered.cookies.map((c) => c.split(';')[0]).join('; ') };
    const enrolled = await post(gated.url, '/v1/verify_otp', { otp: await generate({ secret: offered.body.authenticator_secret }), is_totp: true }, mfa);
    expect(enrolled.body.message).toBe('OTP verified successfully.');
    const google = standins.get('google')!;
    const { q, cookies } = await socialLogin(gated, google, accountFor('google', { email, email_verified: true }));
    expect(q).toEqual({ mfa_required: '1', mfa_methods: 'totp', mfa_gate: 'verify', state: 'client-state' });
    expect(cookies.some((c) => /^mfa=[A-Za-z0-9_-]{43};/.test(c))).toBe(true);
    expect(cookies.some((c) => c.startsWith('cookie_session='))).toBe(false);
    const fresh = await socialLogin(gated, google, accountFor('google'));
    expect(fresh.q).toMatchObject({ mfa_required: '1', mfa_gate: 'offer', state: 'client-state' });
    expect(fresh.q.access_token).toBeUndefined();
  }, 120_000);
});
