/** @module authz/service.test: who may call each authz RPC (spec §5, behaviour.md §7.1–7.2), over the memory store. */
import { describe, it, expect } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import type { AdminCaller, Authenticator, UserCaller } from '@gatehouse/auth';
import { createCallContext, type CallContext, type HandlerMap } from '@gatehouse/rpc';
import { createEngine } from './domain/index.ts';
import { createMemoryStore } from './storage/memory.ts';
import { createAuthzService } from './service.ts';

const unauthorized = (): AppError => new AppError('unauthenticated', 'unauthorized');

/** Callers by a test header: `admin`, or a user id; none is unauthenticated. `x-test-agent` delegates the user's token to that client. */
const authenticator: Authenticator = {
  async resolveCaller(ctx) {
    const who = ctx.headers['x-test-caller'];
    if (!who) throw unauthorized();
    const agent = ctx.headers['x-test-agent'];
    const delegation = agent ? { delegation: { userId: who, clientId: agent, agent: `service_account:${agent}`, chain: [`service_account:${agent}`] } } : {};
    return who === 'admin' ? { kind: 'admin', via: 'header' } : ({ kind: 'user', userId: who, ...delegation } as unknown as UserCaller);
  },
  async requireAdmin(ctx): Promise<AdminCaller> {
    if (ctx.headers['x-test-caller'] !== 'admin') throw unauthorized();
    return { kind: 'admin', via: 'header' };
  },
  async requireUser() { throw unauthorized(); },
  async sessionFromCookies() { return null; },
};

const as = (who?: string): CallContext => createCallContext({ headers: who ? { 'x-test-caller': who } : {} });
const MODEL = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n';

async function service(): Promise<HandlerMap> {
  const { handlers } = createAuthzService({ engine: createEngine({ store: createMemoryStore() }), authenticator });
  await handlers.WriteModel!({ dsl: MODEL }, as('admin'));
  await handlers.WriteTuples!({ tuples: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }] }, as('admin'));
  return handlers;
}

describe('authz service: who may call', () => {
  it('checks the caller first (each RPC\'s auth class), then answers failed_precondition while the engine is off', async () => {
    const { handlers } = createAuthzService({ engine: null, authenticator });
    for (const handler of Object.values(handlers)) {
      await expect(handler({ checks: [], tuples: [] }, as())).rejects.toMatchObject({ code: 'unauthenticated' });
      await expect(handler({ checks: [], tuples: [], user: 'user:anne' }, as('admin'))).rejects.toMatchObject({ code: 'failed_precondition', message: 'authorization engine is not enabled' });
    }
  });

  it('pins check_permissions to the calling user', async () => {
    const h = await service();
    const checks = [{ relation: 'viewer', object: 'doc:1', contextual_tuples: [] }];
    expect(await h.CheckPermissions!({ checks, user: null }, as('anne'))).toEqual({ results: [{ relation: 'viewer', object: 'doc:1', allowed: true }] });
    expect(await h.CheckPermissions!({ checks, user: 'user:anne' }, as('anne'))).toEqual({ results: [{ relation: 'viewer', object: 'doc:1', allowed: true }] });
    expect(await h.CheckPermissions!({ checks, user: null }, as('bob'))).toEqual({ results: [{ relation: 'viewer', object: 'doc:1', allowed: false }] });
    await expect(h.CheckPermissions!({ checks, user: 'user:anne' }, as('bob'))).rejects.toMatchObject({ code: 'permission_denied', message: 'not authorized to query authorization for another subject' });
    await expect(h.ListPermissions!({ user: 'anne' }, as('bob'))).rejects.toMatchObject({ code: 'permission_denied' });
  });

  it('requires an explicit user from a super-admin', async () => {
    const h = await service();
    const checks = [{ relation: 'viewer', object: 'doc:1', contextual_tuples: [] }];
    await expect(h.CheckPermissions!({ checks, user: '' }, as('admin'))).rejects.toMatchObject({ code: 'invalid_argument', message: 'user is required when calling as super-admin' });
    expect(await h.CheckPermissions!({ checks, user: 'anne' }, as('admin'))).toEqual({ results: [{ relation: 'viewer', object: 'doc:1', allowed: true }] });
    expect(await h.ListPermissions!({ user: 'user:anne' }, as('admin'))).toMatchObject({ objects: ['doc:1'], truncated: false });
  });

  it('refuses the admin operations to users', async () => {
    const h = await service();
    for (const rpc of ['GetModel', 'WriteModel', 'WriteTuples', 'DeleteTuples', 'ReadTuples', 'ListUsers', 'Expand', 'Reset', 'DeleteUserTuples']) {
      await expect(h[rpc]!({ tuples: [] }, as('anne'))).rejects.toMatchObject({ code: 'unauthenticated' });
    }
  });

  it('answers the admin operations with the spec messages', async () => {
    const h = await service();
    const tuples = [{ user: 'user:bob', relation: 'viewer', object: 'doc:2' }];
    expect(await h.WriteTuples!({ tuples }, as('admin'))).toEqual({ message: 'Tuples written successfully' });
    expect(await h.ReadTuples!({ object: 'doc:2' }, as('admin'))).toEqual({ tuples, continuation_token: null });
    expect(await h.DeleteTuples!({ tuples }, as('admin'))).toEqual({ message: 'Tuples deleted successfully' });
    await expect(h.DeleteUserTuples!({ user_id: '' }, as('admin'))).rejects.toMatchObject({ code: 'invalid_argument', message: 'user ID is missing' });
    expect(await h.DeleteUserTuples!({ user_id: 'anne' }, as('admin'))).toEqual({ deleted: 1 });
    expect(await h.Reset!({}, as('admin'))).toEqual({ message: 'Authorization model reset successfully' });
    expect(await h.GetModel!({}, as('admin'))).toEqual({ id: '', dsl: '' });
  });
});

describe('authz service: a delegated token (issue 34 §3)', () => {
  const AGENT_MODEL = 'model\n  schema 1.1\ntype user\ntype agent\ntype doc\n  relations\n    define viewer: [user, agent]\n    define editor: [user, agent]\n';
  const delegated = (user: string, agent: string): CallContext => createCallContext({ headers: { 'x-test-caller': user, 'x-test-agent': agent } });
  const checks = ['doc:1', 'doc:2', 'doc:3', 'doc:4'].map((object) => ({ relation: 'viewer', object, contextual_tuples: [] }));

  /** anne views doc:1 and doc:2; the agent bot views doc:2 and doc:3; nobody doc:4. */
  async function withModel(dsl: string, delegatedPermissions?: 'intersection' | 'user'): Promise<HandlerMap> {
    const { handlers } = createAuthzService({ engine: createEngine({ store: createMemoryStore() }), authenticator, ...(delegatedPermissions ? { delegatedPermissions } : {}) });
    await handlers.WriteModel!({ dsl }, as('admin'));
    const tuples = [['user:anne', 'doc:1'], ['user:anne', 'doc:2']];
    if (dsl.includes('type agent')) tuples.push(['agent:bot', 'doc:2'], ['agent:bot', 'doc:3']);
    await handlers.WriteTuples!({ tuples: tuples.map(([user, object]) => ({ user, relation: 'viewer', object })) }, as('admin'));
    return handlers;
  }
  const allowed = (res: unknown) => (res as { results: Array<{ allowed: boolean }> }).results.map((r) => r.allowed);
  const objects = (res: unknown) => (res as { objects: string[] }).objects;

  it('answers perms(agent) ∩ perms(user) when the model declares type agent: user only or agent only is denied, both is allowed', async () => {
    const h = await withModel(AGENT_MODEL);
    expect(allowed(await h.CheckPermissions!({ checks, user: null }, delegated('anne', 'bot')))).toEqual([false, true, false, false]);
    expect(allowed(await h.CheckPermissions!({ checks, user: 'user:anne' }, delegated('anne', 'bot')))).toEqual([false, true, false, false]);
    // another agent, granted nothing, gets nothing of anne's
    expect(allowed(await h.CheckPermissions!({ checks, user: null }, delegated('anne', 'other')))).toEqual([false, false, false, false]);
    // the same user without delegation: her own permissions
    expect(allowed(await h.CheckPermissions!({ checks, user: null }, as('anne')))).toEqual([true, true, false, false]);
    expect(await h.ListPermissions!({ relation: 'viewer', object_type: 'doc' }, delegated('anne', 'bot')))
      .toEqual({ objects: ['doc:2'], permissions: [{ object: 'doc:2', relation: 'viewer' }], truncated: false });
    expect(await h.ListPermissions!({ relation: 'viewer', object_type: 'doc' }, as('anne')))
      .toEqual({ objects: ['doc:1', 'doc:2'], permissions: [{ object: 'doc:1', relation: 'viewer' }, { object: 'doc:2', relation: 'viewer' }], truncated: false });
  });

  it('answers the user\'s permissions without type agent in the model, and under --delegated-permissions=user', async () => {
    const plain = await withModel(MODEL);
    expect(allowed(await plain.CheckPermissions!({ checks, user: null }, delegated('anne', 'bot')))).toEqual([true, true, false, false]);
    expect(objects(await plain.ListPermissions!({ relation: 'viewer', object_type: 'doc' }, delegated('anne', 'bot')))).toEqual(['doc:1', 'doc:2']);
    const userOnly = await withModel(AGENT_MODEL, 'user');
    expect(allowed(await userOnly.CheckPermissions!({ checks, user: null }, delegated('anne', 'bot')))).toEqual([true, true, false, false]);
    expect(objects(await userOnly.ListPermissions!({ relation: 'viewer', object_type: 'doc' }, delegated('anne', 'bot')))).toEqual(['doc:1', 'doc:2']);
  });

  it('still pins the subject: a delegated token may not ask for another user', async () => {
    const h = await withModel(AGENT_MODEL);
    await expect(h.CheckPermissions!({ checks, user: 'user:bob' }, delegated('anne', 'bot'))).rejects.toMatchObject({ code: 'permission_denied', message: 'not authorized to query authorization for another subject' });
  });
});
