/**
 * @module @gatehouse/authn/domain/device.test
 * The device authorization grant (RFC 8628; issue 34 §5) through authn's RPCs on memory storage and a
 * fake clock: the §3.2 answer and its user code (§6.1), per-client enablement, polling with
 * `authorization_pending`, `slow_down` (+5 s), `access_denied`, `expired_token`, single use, the
 * verification page's calls (sign-in required, consent ticket bound to the session, wrong codes
 * limited per §5.1), and discovery.
 */
import { describe, expect, it } from '@jest/globals';
import { makeAuthn } from '../fixture.ts';
import {
  DEVICE_CODE_GRANT, DEVICE_CODE_TTL_SECONDS, DEVICE_POLL_INTERVAL_SECONDS, LOCKOUT_MAX_FAILURES, SLOW_DOWN_SECONDS, USER_CODE_ALPHABET,
  generateUserCode, normaliseUserCode,
} from './device.ts';

const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function setup() {
  const a = makeAuthn();
  const make = async (name: string, grantTypes: string[], isPublic = false) => {
    const { res } = await a.call('CreateClient', {
      name, allowed_scopes: ['openid', 'profile', 'email'], grant_types: grantTypes, is_public: isPublic,
    }, ADMIN);
    const id = res.client.client_id as string;
    const basic: Record<string, string> = isPublic ? {} : { authorization: `Basic ${Buffer.from(`${id}:${res.client_secret as string}`).toString('base64')}` };
    const params: Record<string, string> = isPublic ? { client_id: id } : {};
    return { id, basic, params };
  };
  const tv = await make('Living Room TV', [DEVICE_CODE_GRANT], true);
  const web = await make('Web app', ['client_credentials']);
  const user = await a.signup('ada@example.com');
  const http = async (rpc: string, params: Record<string, string>, headers: Record<string, string> = {}) =>
    (await a.call(rpc, { params, method: 'POST' }, headers)).res;
  const start = (params: Record<string, string> = {}, client = tv) => http('DeviceAuthorization', { ...client.params, ...params }, client.basic);
  const poll = (deviceCode: string, client = tv) => http('OauthToken', { ...client.params, grant_type: DEVICE_CODE_GRANT, device_code: deviceCode }, client.basic);
  const verify = (params: Record<string, string>, cookie: Record<string, string> = user.cookie) => http('DeviceVerification', params, cookie);
  return { a, tv, web, user, http, start, poll, verify };
}

describe('user codes (RFC 8628 §6.1)', () => {
  it('are 8 letters of a consonant alphabet as XXXX-XXXX, read case-insensitively without the dash', () => {
    for (let i = 0; i < 200; i++) {
      const code = generateUserCode();
      expect(code).toMatch(new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`));
      expect(normaliseUserCode(code.toLowerCase())).toBe(code.replace('-', ''));
    }
    expect(normaliseUserCode(' wdjb mjht ')).toBe('WDJBMJHT');
    expect(normaliseUserCode('WDJB-MJH')).toBeNull();
    expect(normaliseUserCode('WDJB-MJHA')).toBeNull(); // a vowel is never part of a code
    expect(normaliseUserCode('')).toBeNull();
  });
});

describe('device authorization grant (RFC 8628)', () => {
  it('answers §3.2 with codes, the /app/device URIs, expires_in 600 and interval 5; only for clients with the grant type', async () => {
    const { a, start, web } = await setup();
    const r = await start({ scope: 'openid email' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), user_code: expect.stringMatching(/^[B-Z]{4}-[B-Z]{4}$/),
      verification_uri: `${a.options.url}/app/device`, verification_uri_complete: `${a.options.url}/app/device?user_code=${r.body.user_code as string}`,
      expires_in: DEVICE_CODE_TTL_SECONDS, interval: DEVICE_POLL_INTERVAL_SECONDS,
    });
    const refused = await start({}, web);
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    const scope = await start({ scope: 'openid phone' });
    expect({ status: scope.status, error: scope.body.error }).toEqual({ status: 400, error: 'invalid_scope' });
    const unknown = await a.call('DeviceAuthorization', { params: { client_id: 'nope' }, method: 'POST' });
    expect({ status: unknown.res.status, error: unknown.res.body.error }).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('polls: authorization_pending, slow_down adding 5 s to the interval, then the tokens once the user allowed, once', async () => {
    const { a, start, poll, verify, user } = await setup();
    const { body: d } = await start({ scope: 'openid email' });
    const first = await poll(d.device_code);
    expect({ status: first.status, error: first.body.error }).toEqual({ status: 400, error: 'authorization_pending' });
    a.advance(DEVICE_POLL_INTERVAL_SECONDS - 1);
    expect((await poll(d.device_code)).body.error).toBe('slow_down');
    // the interval is now 10 s: 5 s later is still too soon
    a.advance(DEVICE_POLL_INTERVAL_SECONDS);
    expect((await poll(d.device_code)).body.error).toBe('slow_down');
    a.advance(DEVICE_POLL_INTERVAL_SECONDS + 2 * SLOW_DOWN_SECONDS);
    expect((await poll(d.device_code)).body.error).toBe('authorization_pending');

    const screen = await verify({ user_code: (d.user_code as string).toLowerCase().replace('-', ' ') });
    expect(screen.status).toBe(200);
    expect(screen.body).toMatchObject({
      client_name: 'Living Room TV', user_code: d.user_code,
      scopes: [{ scope: 'openid', words: expect.stringContaining('Know who you are') }, { scope: 'email', words: expect.stringContaining('email address') }],
    });
    const answer = await verify({ consent_ticket: screen.body.consent_ticket, decision: 'allow' });
    expect(answer).toMatchObject({ status: 200, body: { status: 'approved', client_name: 'Living Room TV' } });
    // the ticket is single use
    expect((await verify({ consent_ticket: screen.body.consent_ticket, decision: 'allow' })).status).toBe(400);

    a.advance(100);
    const tokens = await poll(d.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'openid email', access_token: expect.any(String), id_token: expect.any(String) });
    const again = await poll(d.device_code);
    expect({ status: again.status, error: again.body.error, d: again.body.error_description }).toEqual({ status: 400, error: 'invalid_grant', d: 'device_code already used' });
    // the allowed client is remembered like an /authorize consent (listed in the account console)
    const grants = (await a.call('ConsentGrants', {}, user.cookie)).res;
    expect(grants.consent_grants).toEqual([expect.objectContaining({ client_name: 'Living Room TV', scopes: ['email', 'openid'] })]);
    // revoking that consent ends the device's tokens
    const bearer = { authorization: `Bearer ${tokens.body.access_token as string}` };
    expect((await a.call('Userinfo', { params: {}, method: 'GET' }, bearer)).res.status).toBe(200);
    await a.call('RevokeConsentGrant', { id: grants.consent_grants[0].id }, user.cookie);
    expect((await a.call('Userinfo', { params: {}, method: 'GET' }, bearer)).res.status).toBe(401);
  });

  it('a denial answers access_denied; an unanswered code expires_token after 600 s; another client\'s code is invalid_grant', async () => {
    const { a, start, poll, verify, http } = await setup();
    const { body: d } = await start();
    const screen = await verify({ user_code: d.user_code });
    expect((await verify({ consent_ticket: screen.body.consent_ticket, decision: 'deny' })).body).toEqual({ status: 'denied', client_name: 'Living Room TV' });
    expect((await poll(d.device_code)).body.error).toBe('access_denied');

    const { body: late } = await start();
    a.advance(DEVICE_CODE_TTL_SECONDS);
    expect((await poll(late.device_code)).body.error).toBe('expired_token');
    expect((await verify({ user_code: late.user_code })).body.error).toBe('invalid_user_code');

    const { body: other } = await start();
    const { res: cc } = await a.call('CreateClient', { name: 'Other TV', allowed_scopes: ['openid'], grant_types: [DEVICE_CODE_GRANT], is_public: true }, ADMIN);
    const stolen = await http('OauthToken', { client_id: cc.client.client_id, grant_type: DEVICE_CODE_GRANT, device_code: other.device_code });
    expect({ status: stolen.status, error: stolen.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    expect((await poll('')).body.error).toBe('invalid_request');
  });

  it('the verification page needs a sign-in; its ticket is bound to the session that saw it', async () => {
    const { a, start, verify } = await setup();
    const { body: d } = await start();
    const anonymous = await verify({ user_code: d.user_code }, {});
    expect({ status: anonymous.status, error: anonymous.body.error }).toEqual({ status: 401, error: 'login_required' });
    const screen = await verify({ user_code: d.user_code });
    const bob = await a.signup('bob@example.com');
    const foreign = await verify({ consent_ticket: screen.body.consent_ticket, decision: 'allow' }, bob.cookie);
    expect({ status: foreign.status, d: foreign.body.error_description }).toEqual({ status: 400, d: 'this consent screen was shown to another sign-in' });
  });

  it('limits wrong user codes per user (RFC 8628 §5.1): after 5 wrong entries even the right code waits', async () => {
    const { a, start, verify } = await setup();
    const { body: d } = await start();
    for (let i = 0; i < LOCKOUT_MAX_FAILURES; i++) {
      const wrong = await verify({ user_code: 'BBBB-BBBB' });
      expect({ status: wrong.status, error: wrong.body.error }).toEqual({ status: 400, error: 'invalid_user_code' });
    }
    const locked = await verify({ user_code: d.user_code });
    expect({ status: locked.status, error: locked.body.error }).toEqual({ status: 429, error: 'too_many_attempts' });
    // another user is not affected
    const bob = await a.signup('bob@example.com');
    expect((await verify({ user_code: d.user_code }, bob.cookie)).status).toBe(200);
  });

  it('discovery advertises the endpoint and the grant type (RFC 8628 §4)', async () => {
    const { a } = await setup();
    const { res } = await a.call('GetOpenidConfiguration', {});
    expect(res.device_authorization_endpoint).toBe(`${a.options.url}/oauth/device_authorization`);
    expect(res.grant_types_supported).toContain(DEVICE_CODE_GRANT);
  });
});

