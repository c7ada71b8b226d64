/** @module authz/service.test: who may call each authz RPC (spec §5, behaviour.md §7.1–7.2), over the memory store. */
import { describe, it, expect } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import type { AdminCaller, Authenticator, UserCaller } from '@gatehouse/auth';
import { createCallContext, type CallContext, type HandlerMap } from '@gatehouse/rpc';
import { createEngine } from './domain/index.ts';
import { createMemoryStore } from './storage/memory.ts';
import { createAuthzService } from './service.ts';

const unauthorized = (): AppError => new AppError('unauthenticated', 'unauthorized');

/** Callers by a test header: `admin`, or a user id; none is unauthenticated. */
const authenticator: Authenticator = {
  async resolveCaller(ctx) {
    const who = ctx.headers['x-test-caller'];
    if (!who) throw unauthorized();
    return who === 'admin' ? { kind: 'admin', via: 'header' } : ({ kind: 'user', userId: who } as unknown as UserCaller);
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
  it('answers failed_precondition for every RPC while the engine is off, before looking at credentials', async () => {
    const { handlers } = createAuthzService({ engine: null, authenticator });
    for (const handler of Object.values(handlers)) {
      await expect(handler({ checks: [], tuples: [] }, as())).rejects.toMatchObject({ code: 'failed_precondition', message: 'authorization engine is not enabled' });
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
