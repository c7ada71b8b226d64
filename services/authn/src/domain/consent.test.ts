/**
 * @module @gatehouse/authn/domain/consent.test
 * Consent at /authorize (issue 34) through authn's RPCs on memory storage and a fake clock: a
 * third-party client is shown the page, allow issues a code and is remembered per scope set, deny
 * answers access_denied (RFC 6749 §4.1.2.1), a ticket is single use, expires, and is bound to the
 * session it was shown to; prompt=none answers consent_required; first-party and the server's own
 * client skip it; grants are listed and revoked by the user and by an admin, ending the user's
 * sessions with that client.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { makeAuthn } from '../fixture.ts';
import { CONSENT_TTL_SECONDS, consentGrantId } from './consent.ts';

const CB = 'https://rp.example/cb';
const VERIFIER = 'v'.repeat(43);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function setup(firstParty = false) {
  const a = makeAuthn();
  const { res } = await a.call('CreateClient', {
    name: 'Third <Party> App', allowed_scopes: ['openid', 'profile', 'email', 'offline_access'], redirect_uris: [CB],
    grant_types: ['authorization_code', 'refresh_token'], is_first_party: firstParty,
  }, ADMIN);
  const client = { id: res.client.client_id as string, secret: res.client_secret as string };
  const basic = { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` };
  const user = await a.signup('ada@example.com');
  const http = async (rpc: string, params: Record<string, string>, headers: Record<string, string> = {}, method = 'POST') =>
    (await a.call(rpc, { params, method }, headers)).res;
  const authorize = (params: Record<string, string> = {}, cookie: Record<string, string> = user.cookie) =>
    http('Authorize', { client_id: client.id, redirect_uri: CB, response_type: 'code', scope: 'openid email', code_challenge: CHALLENGE, code_challenge_method: 'S256', state: 's1', ...params }, cookie, 'GET');
  const ticketOf = (html: string): string => /name="consent_ticket" value="([^"]+)"/.exec(html)![1]!;
  const answer = (ticket: string, decision: string, cookie: Record<string, string> = user.cookie) =>
    http('Authorize', { consent_ticket: ticket, decision }, cookie, 'POST');
  return { a, client, basic, user, http, authorize, ticketOf, answer };
}

describe('consent at /authorize (issue 34)', () => {
  it("shows the client's name, its redirect host and the scopes in words, then allow issues a code and is remembered", async () => {
    const { authorize, ticketOf, answer, http, basic } = await setup();
    const page = await authorize();
    expect(page.status).toBe(200);
    expect(page.location ?? null).toBeNull();
    expect(page.html).toContain('Third &#60;Party&#62; App wants to access your account');
    expect(page.html).toContain('<strong>rp.example</strong>');
    expect(page.html).toContain('See your email address');
    expect(page.frameable).toBe(false);
    const allowed = await answer(ticketOf(page.html), 'allow');
    expect(allowed.status).toBe(302);
    const loc = new URL(allowed.location);
    expect(loc.origin + loc.pathname).toBe(CB);
    expect(loc.searchParams.get('state')).toBe('s1');
    const code = loc.searchParams.get('code')!;
    const tokens = await http('OauthToken', { grant_type: 'authorization_code', code, redirect_uri: CB, code_verifier: VERIFIER }, basic);
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe('openid email');
    // remembered: the same scopes, or fewer, go straight through
    expect((await authorize()).status).toBe(302);
    expect(new URL((await authorize({ scope: 'openid' })).location).searchParams.get('code')).toBeTruthy();
    // a wider scope set asks again; prompt=consent always asks
    expect((await authorize({ scope: 'openid email profile' })).status).toBe(200);
    expect((await authorize({ prompt: 'consent' })).status).toBe(200);
  });

  it('deny answers access_denied to the redirect URI with state (RFC 6749 §4.1.2.1) and remembers nothing', async () => {
    const { authorize, ticketOf, answer, a, user } = await setup();
    const denied = await answer(ticketOf((await authorize()).html), 'deny');
    const loc = new URL(denied.location);
    expect(loc.searchParams.get('error')).toBe('access_denied');
    expect(loc.searchParams.get('state')).toBe('s1');
    expect(loc.searchParams.get('code')).toBeNull();
    expect((await a.call('ConsentGrants', {}, user.bearer)).res.consent_grants).toEqual([]);
    expect((await authorize()).status).toBe(200);
  });

  it('a ticket is single use, expires, and answers only the session it was shown to', async () => {
    const { a, authorize, ticketOf, answer } = await setup();
    const ticket = ticketOf((await authorize()).html);
    expect((await answer(ticket, 'allow')).status).toBe(302);
    const again = await answer(ticket, 'allow');
    expect(again).toMatchObject({ status: 400 });
    expect(again.html).toContain('already answered');

    const other = await a.signup('eve@example.com');
    const stolen = ticketOf((await authorize({ scope: 'openid profile' })).html);
    const refused = await answer(stolen, 'allow', other.cookie);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('shown to another sign-in');
    // spent by the refused attempt as well
    expect((await answer(stolen, 'allow')).status).toBe(400);

    const late = ticketOf((await authorize({ scope: 'openid profile' })).html);
    a.advance(CONSENT_TTL_SECONDS + 1);
    expect((await answer(late, 'allow')).html).toContain('expired');
    // a GET never answers
    const get = await a.call('Authorize', { params: { consent_ticket: late, decision: 'allow' }, method: 'GET' }, {});
    expect(get.res.status).toBe(405);
  });

  it('prompt=none answers consent_required instead of a page', async () => {
    const { authorize } = await setup();
    const r = await authorize({ prompt: 'none' });
    expect(new URL(r.location).searchParams.get('error')).toBe('consent_required');
  });

  it('a first-party client skips consent', async () => {
    const { authorize } = await setup(true);
    expect((await authorize()).status).toBe(302);
  });

  it('grants are listed and revoked by the user and by an admin; a revocation ends the sessions with that client', async () => {
    const { a, client, authorize, ticketOf, answer, http, basic, user } = await setup();
    const allowed = await answer(ticketOf((await authorize()).html), 'allow');
    const tokens = await http('OauthToken', { grant_type: 'authorization_code', code: new URL(allowed.location).searchParams.get('code')!, redirect_uri: CB, code_verifier: VERIFIER }, basic);
    const list = (await a.call('ConsentGrants', {}, user.bearer)).res;
    expect(list.pagination.total).toBe(1);
    expect(list.consent_grants[0]).toMatchObject({
      id: consentGrantId(user.res.user.id, client.id, ['openid', 'email']), client_id: client.id, client_name: 'Third <Party> App', scopes: ['email', 'openid'], user_id: user.res.user.id,
    });
    const byAdmin = (await a.call('UserConsentGrants', { user_id: user.res.user.id }, ADMIN)).res;
    expect(byAdmin.consent_grants.map((g: { id: string }) => g.id)).toEqual([list.consent_grants[0].id]);
    const other = await a.signup('eve@example.com');
    await expect(a.call('RevokeConsentGrant', { id: list.consent_grants[0].id }, other.bearer)).rejects.toMatchObject({ code: 'not_found' });
    expect((await http('OauthIntrospect', { token: tokens.body.access_token }, basic)).body.active).toBe(true);
    expect((await a.call('RevokeConsentGrant', { id: list.consent_grants[0].id }, user.bearer)).res.message).toBe('Consent revoked');
    expect((await http('OauthIntrospect', { token: tokens.body.access_token }, basic)).body.active).toBe(false);
    // the user's own session (the server's client) is untouched
    expect((await a.call('Profile', {}, user.bearer)).res.email).toBe('ada@example.com');
    expect((await authorize()).status).toBe(200);
    await expect(a.call('RevokeUserConsentGrant', { id: list.consent_grants[0].id }, ADMIN)).rejects.toMatchObject({ code: 'not_found' });
    await expect(a.call('UserConsentGrants', { user_id: '' }, ADMIN)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(a.call('ConsentGrants', {}, {})).rejects.toMatchObject({ code: 'unauthenticated' });
  });
});
