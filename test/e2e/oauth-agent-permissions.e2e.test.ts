/**
 * @module test/e2e/oauth-agent-permissions
 * Delegation for agents (issue 34 §3), in both modes, with openid-client doing the RFC 8693 token
 * exchange as an agent (a service account) acting for a user:
 *  - under a model declaring `type agent`, check_permissions and list_permissions through REST with the
 *    delegated token answer perms(agent) ∩ perms(user): a tuple granting only the user, or only the agent,
 *    is denied; both, allowed; the user's own token keeps the user's permissions;
 *  - `--delegated-permissions=user` restores the user's permissions for the delegated token;
 *  - a mutating `/v1` operation (update_profile) is refused 403 without `gatehouse:write`, allowed with it,
 *    and its audit row names the agent as actor with the user in metadata.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { postJson, raw } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';
import { waitForAudits } from './audit-support.ts';

const TE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const AT = 'urn:ietf:params:oauth:token-type:access_token';
const MODEL = `model
  schema 1.1
type user
type agent
type doc
  relations
    define viewer: [user, agent]
`;
const DOCS = ['doc:user-only', 'doc:agent-only', 'doc:both', 'doc:neither'];

/** What one deployment gives a test: an agent (service account allowed token exchange), a user, her token, and the tuples. */
interface Scene {
  agent: { id: string; cfg: oidc.Configuration };
  userId: string;
  userToken: string;
  /** a delegated token of the user for the agent, `scope` as asked */
  exchange(scope: string): Promise<string>;
}

/** Starts nothing: sets up the model, the agent, the user and the tuples on `d`. */
async function sceneOn(d: Deployment): Promise<Scene> {
  const admin = { origin: d.url, 'x-service-admin-secret': d.adminSecret };
  expect((await postJson(`${d.url}/v1/admin/fga/model`, { dsl: MODEL }, admin)).status).toBe(200);
  const made = await postJson(`${d.url}/v1/admin/create_client`, {
    name: `agent-${randomUUID().slice(0, 8)}`, allowed_scopes: ['openid', 'email', 'profile', 'gatehouse:write'], grant_types: ['client_credentials', TE],
  }, admin);
  expect(made.status).toBe(200);
  const issuer = await oidc.discovery(new URL(d.url), made.body.client.client_id, {}, oidc.ClientSecretBasic(made.body.client_secret), { execute: [oidc.allowInsecureRequests] });
  const agent = { id: made.body.client.client_id as string, cfg: issuer };

  const email = freshEmail('agentperm');
  expect((await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: d.url })).status).toBe(200);
  // the user's token holds gatehouse:write, so an exchange may pass it on when the agent asks for it
  const login = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD, scope: ['openid', 'email', 'profile', 'gatehouse:write'] }, { origin: d.url });
  expect(login.status).toBe(200);
  const userId = login.body.user.id as string;
  const userToken = login.body.access_token as string;

  const tuples = [
    { user: `user:${userId}`, relation: 'viewer', object: 'doc:user-only' },
    { user: `agent:${agent.id}`, relation: 'viewer', object: 'doc:agent-only' },
    { user: `user:${userId}`, relation: 'viewer', object: 'doc:both' },
    { user: `agent:${agent.id}`, relation: 'viewer', object: 'doc:both' },
  ];
  expect((await postJson(`${d.url}/v1/admin/fga/tuples`, { tuples }, admin)).status).toBe(200);

  const exchange = async (scope: string): Promise<string> => {
    const actor = await oidc.clientCredentialsGrant(agent.cfg);
    const ex = await oidc.genericGrantRequest(agent.cfg, TE, { subject_token: userToken, subject_token_type: AT, actor_token: actor.access_token, actor_token_type: AT, scope });
    expect(decodeJwt(ex.access_token)).toMatchObject({ sub: userId, act: { sub: `service_account:${agent.id}` } });
    return ex.access_token;
  };
  return { agent, userId, userToken, exchange };
}

const bearer = (d: Deployment, token: string) => ({ origin: d.url, authorization: `Bearer ${token}` });
const checksOf = () => DOCS.map((object) => ({ relation: 'viewer', object }));

/** The REST answers of check_permissions (allowed per DOCS) and list_permissions (objects) for `token`. */
async function permissionsOf(d: Deployment, token: string): Promise<{ checks: boolean[]; listed: string[] }> {
  const check = await postJson(`${d.url}/v1/check_permissions`, { checks: checksOf() }, bearer(d, token));
  expect(check.status).toBe(200);
  const list = await postJson(`${d.url}/v1/list_permissions`, { relation: 'viewer', object_type: 'doc' }, bearer(d, token));
  expect(list.status).toBe(200);
  return {
    checks: (check.body.results as Array<{ object: string; allowed: boolean }>).map((r) => r.allowed),
    listed: [...(list.body.objects as string[])].sort(),
  };
}

describe.each(['all', 'split'] as const)('delegation for agents: permissions, scopes and audit (%s)', (mode) => {
  describe('--delegated-permissions=intersection (the default)', () => {
    let d: Deployment;
    let s: Scene;
    beforeAll(async () => {
      d = await startDeployment(mode, { readyTimeoutMs: 90_000 });
      s = await sceneOn(d);
    }, 180_000);
    afterAll(async () => { await d?.stop(); });

    it('check_permissions and list_permissions of a delegated token answer perms(agent) ∩ perms(user); the user alone keeps hers', async () => {
      const delegated = await s.exchange('openid profile');
      // user only → denied, agent only → denied, both → allowed, neither → denied
      expect(await permissionsOf(d, delegated)).toEqual({ checks: [false, false, true, false], listed: ['doc:both'] });
      expect(await permissionsOf(d, s.userToken)).toEqual({ checks: [true, false, true, false], listed: ['doc:both', 'doc:user-only'] });
      // the subject stays pinned: the delegated token cannot ask for the agent, nor anyone else
      const other = await postJson(`${d.url}/v1/check_permissions`, { checks: checksOf(), user: `agent:${s.agent.id}` }, bearer(d, delegated));
      expect({ status: other.status, body: other.body }).toEqual({ status: 403, body: { code: 'permission_denied', message: 'not authorized to query authorization for another subject' } });
    });

    it('a mutating operation needs gatehouse:write: refused 403 without it, allowed with it, and the audit row names the agent with the user in metadata', async () => {
      const readOnly = await s.exchange('openid profile');
      expect(decodeJwt(readOnly).scope).toBe('openid profile');
      // reads stay open to it
      expect((await raw(`${d.url}/v1/profile`, { headers: bearer(d, readOnly) })).status).toBe(200);
      const refused = await postJson(`${d.url}/v1/update_profile`, { given_name: 'Refused' }, bearer(d, readOnly));
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 403, body: { code: 'permission_denied', message: 'a delegated token may not call update_profile without the gatehouse:write or gatehouse:update_profile scope' },
      });
      // /v1/session would trade it for an undelegated token: mutating too
      expect((await postJson(`${d.url}/v1/session`, {}, bearer(d, readOnly))).status).toBe(403);

      const writer = await s.exchange('openid profile gatehouse:write');
      expect(decodeJwt(writer).scope).toBe('openid profile gatehouse:write');
      const updated = await postJson(`${d.url}/v1/update_profile`, { given_name: 'Delegated' }, bearer(d, writer));
      expect(updated.status).toBe(200);
      const profile = await raw(`${d.url}/v1/profile`, { headers: bearer(d, s.userToken) });
      expect(profile.body).toMatchObject({ given_name: 'Delegated' });

      const rows = await waitForAudits(d, (r) => r.action === 'user.profile_updated' && r.resource_id === s.userId, ['user.profile_updated']);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        actor_type: 'service_account', actor_id: s.agent.id,
        metadata: expect.objectContaining({ user_id: s.userId, act: [`service_account:${s.agent.id}`], changed_fields: ['given_name'] }),
      });
    });
  });

  describe('--delegated-permissions=user (migration)', () => {
    let d: Deployment;
    let s: Scene;
    beforeAll(async () => {
      d = await startDeployment(mode, { flags: ['--delegated-permissions=user'], readyTimeoutMs: 90_000 });
      s = await sceneOn(d);
    }, 180_000);
    afterAll(async () => { await d?.stop(); });

    it('a delegated token answers with the user\'s own permissions', async () => {
      const delegated = await s.exchange('openid profile');
      expect(await permissionsOf(d, delegated)).toEqual({ checks: [true, false, true, false], listed: ['doc:both', 'doc:user-only'] });
    });
  });
});
