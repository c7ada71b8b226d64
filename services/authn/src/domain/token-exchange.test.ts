/**
 * @module @gatehouse/authn/domain/token-exchange.test
 * RFC 8693 token exchange (issue 34 §3) through authn's RPCs on memory storage: an agent (a service
 * account allowed the grant) exchanges a user's access token for a delegated one carrying `act`,
 * attenuated scope and the RFC 8707 audience; nested `act` for multi-hop, capped; the actor token must be
 * the agent's own; the delegated token dies with the user's session, and the exchange is then refused.
 */
import { describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { makeAuthn } from '../fixture.ts';
import { ACCESS_TOKEN_TYPE, MAX_ACT_DEPTH, TOKEN_EXCHANGE_GRANT } from './token-exchange.ts';

const ADMIN = { 'x-service-admin-secret': 'admin-secret' };

async function setup() {
  const a = makeAuthn();
  const agent = async (name: string, scopes = ['openid', 'email', 'read:docs'], grants = ['client_credentials', TOKEN_EXCHANGE_GRANT]) => {
    const { res } = await a.call('CreateClient', { name, allowed_scopes: scopes, grant_types: grants }, ADMIN);
    const basic = { authorization: `Basic ${Buffer.from(`${res.client.client_id}:${res.client_secret}`).toString('base64')}` };
    return { id: res.client.client_id as string, basic };
  };
  const token = async (params: Record<string, string>, headers: Record<string, string>) => (await a.call('OauthToken', { params, method: 'POST' }, headers)).res;
  const exchange = (subject: string, by: { basic: Record<string, string> }, extra: Record<string, string> = {}) =>
    token({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: subject, subject_token_type: ACCESS_TOKEN_TYPE, ...extra }, by.basic);
  const user = await a.signup('ada@example.com');
  return { a, agent, token, exchange, user, userToken: user.res.access_token as string };
}

describe('RFC 8693 token exchange', () => {
  it("issues the user's token with act, the intersection of scopes and the resource as audience", async () => {
    const { a, agent, exchange, user, userToken } = await setup();
    const bot = await agent('bot');
    const r = await exchange(userToken, bot, { resource: 'https://api.example/docs', scope: 'openid email profile' });
    expect(r.status).toBe(200);
    // profile: held by the user's token but not allowed to the agent
    expect(r.body).toMatchObject({ issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', scope: 'openid email', expires_in: expect.any(Number) });
    const claims = decodeJwt(r.body.access_token);
    expect(claims).toMatchObject({ sub: user.res.user.id, aud: 'https://api.example/docs', client_id: bot.id, act: { sub: `service_account:${bot.id}` }, jti: expect.any(String) });
    // the delegated token is the user's on /v1
    expect((await a.call('Profile', {}, { authorization: `Bearer ${r.body.access_token}` })).res.email).toBe('ada@example.com');
    // the agent introspects it and sees the chain (RFC 8693 §4.4)
    expect((await a.call('OauthIntrospect', { params: { token: r.body.access_token }, method: 'POST' }, bot.basic)).res.body)
      .toMatchObject({ active: true, act: { sub: `service_account:${bot.id}` } });
    // the agent cannot end the user's session by revoking the delegated token
    await a.call('OauthRevoke', { params: { token: r.body.access_token }, method: 'POST' }, bot.basic);
    expect((await a.call('Profile', {}, user.bearer)).res.email).toBe('ada@example.com');
  });

  it('nests act for multi-hop delegation and caps the depth', async () => {
    const { agent, exchange, userToken } = await setup();
    const bots = await Promise.all([...Array(MAX_ACT_DEPTH + 1).keys()].map((i) => agent(`bot${i}`)));
    let t = userToken;
    for (let i = 0; i < MAX_ACT_DEPTH; i += 1) {
      const r = await exchange(t, bots[i]!);
      expect(r.status).toBe(200);
      t = r.body.access_token;
    }
    const act = decodeJwt(t).act as Record<string, any>;
    expect(act.sub).toBe(`service_account:${bots[MAX_ACT_DEPTH - 1]!.id}`);
    expect(act.act.sub).toBe(`service_account:${bots[MAX_ACT_DEPTH - 2]!.id}`);
    expect((await exchange(t, bots[MAX_ACT_DEPTH]!)).body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('at most') });
  });

  it("takes only the agent's own live actor token", async () => {
    const { agent, exchange, token, userToken } = await setup();
    const bot = await agent('bot');
    const other = await agent('other');
    const own = (await token({ grant_type: 'client_credentials' }, bot.basic)).body.access_token;
    const theirs = (await token({ grant_type: 'client_credentials' }, other.basic)).body.access_token;
    expect((await exchange(userToken, bot, { actor_token: own, actor_token_type: ACCESS_TOKEN_TYPE })).status).toBe(200);
    expect((await exchange(userToken, bot, { actor_token: theirs, actor_token_type: ACCESS_TOKEN_TYPE })).body.error).toBe('invalid_grant');
    expect((await exchange(userToken, bot, { actor_token: own })).body.error).toBe('invalid_request');
  });

  it("refuses what it must: no client authentication, another grant, bad token types, no scope left, a subject whose session ended", async () => {
    const { a, agent, exchange, token, user, userToken } = await setup();
    const bot = await agent('bot');
    const plain = await agent('plain', ['openid'], ['client_credentials']);
    const narrow = await agent('narrow', ['read:docs']);
    expect((await token({ grant_type: TOKEN_EXCHANGE_GRANT, subject_token: userToken, subject_token_type: ACCESS_TOKEN_TYPE, client_id: bot.id }, {})).body.error).toBe('invalid_client');
    expect((await exchange(userToken, plain)).body.error).toBe('unauthorized_client');
    expect((await exchange(userToken, bot, { subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' })).body.error).toBe('invalid_request');
    expect((await exchange(userToken, bot, { requested_token_type: 'urn:ietf:params:oauth:token-type:refresh_token' })).body.error).toBe('invalid_request');
    expect((await exchange(userToken, narrow)).body.error).toBe('invalid_scope');
    expect((await exchange(userToken, bot, { resource: 'https://api.example/#frag' })).body.error).toBe('invalid_target');
    expect((await exchange('not-a-token', bot)).body.error).toBe('invalid_grant');

    const delegated = (await exchange(userToken, bot)).body.access_token;
    await a.call('Logout', {}, user.bearer);
    // the user's session is gone: the delegated token with it, and no new exchange
    await expect(a.call('Profile', {}, { authorization: `Bearer ${delegated}` })).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await exchange(userToken, bot)).body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringContaining('session') });
  });
});
