/**
 * @module test/e2e/authz-api
 * The admin authorization-engine API end to end (spec §4 "Admin: authorization engine", behaviour.md
 * §7.1, §7.3): model versions, tuple write/delete/read with paging, list_users, expand, admin-only
 * access and reset. Every step runs on REST, GraphQL and native gRPC and the answers are compared,
 * against all-in-one (SQLite) and split (PostgreSQL, authz behind the gateway) deployments.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { SURFACES } from '../support/surfaces.ts';
import { AUTHZ_CONFIGS, backendFlags } from '../support/authz-backends.ts';
import { createCallContext } from '@gatehouse/rpc';
import { authzGrpcClient, authzPerform, closeAuthzClients, expectAllError, okBody, onAll, signupUser, type AuthzCreds, type AuthzOp } from '../support/authz-surfaces.ts';
import { DOCS_MODEL, ULID, deleteAllTuples, readAll, type WireTuple } from '../support/authz-fixtures.ts';

describe.each(AUTHZ_CONFIGS)('authz admin API on three surfaces (%s, %s engine)', (mode, backend) => {
  let d: Deployment;
  let fga: Awaited<ReturnType<typeof backendFlags>> | undefined;
  let admin: AuthzCreds;
  let user: { token: string; subject: string };
  beforeAll(async () => {
    // X-Forwarded-For names the client IP: the wrong admin secrets below come from distinct IPs, under
    // the admin-secret lockout (10 failures per IP, behaviour.md §5.1) that would refuse the right one too
    fga = await backendFlags(backend);
    d = await startDeployment(mode, { flags: ['--trusted-proxies=127.0.0.1/32', ...fga.flags] });
    admin = { adminSecret: d.adminSecret };
    user = await signupUser(d.url, `authz-api-${randomBytes(5).toString('hex')}@example.com`);
  }, 90_000);
  afterAll(async () => { closeAuthzClients(); await d?.stop(); await fga?.stop(); });

  const tuples = (n: number, prefix: string): WireTuple[] =>
    Array.from({ length: n }, (_, i) => ({ user: `user:${prefix}${i % 3}`, relation: i % 2 ? 'viewer' : 'owner', object: `doc:${prefix}${i}` }));

  it('GET model on an empty store answers {id: "", dsl: ""}', async () => {
    const a = await onAll(d, { op: '_fga_get_model', creds: admin });
    for (const s of SURFACES) expect(okBody(a[s])).toEqual({ id: '', dsl: '' });
  });

  it('an invalid DSL is 400 invalid_argument naming the problem; a blank one is `dsl is required`', async () => {
    const undefinedRelation = DOCS_MODEL.replace('or editor', 'or approver');
    const a = await onAll(d, { op: '_fga_write_model', args: { dsl: undefinedRelation }, creds: admin });
    expect(a.rest.ok ? 'ok' : a.rest.code).toBe('invalid_argument');
    expect(a.rest.ok ? '' : a.rest.message).toContain('approver');
    const syntax = await onAll(d, { op: '_fga_write_model', args: { dsl: 'model\n  schema 1.1\ntype doc\n  relations\n    define viewer [user]\n' }, creds: admin });
    expect(syntax.rest.ok ? '' : syntax.rest.message).toMatch(/^invalid authorization model: line \d+, column \d+: /);
    const unknownType = await onAll(d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL.replace('[user]\ntype doc', '[person]\ntype doc') }, creds: admin });
    expectAllError(unknownType, 'invalid_argument', 'type "person" is not defined');
    const blank = await onAll(d, { op: '_fga_write_model', args: { dsl: '   ' }, creds: admin });
    expectAllError(blank, 'invalid_argument', 'dsl is required');
    const still = await onAll(d, { op: '_fga_get_model', creds: admin });
    expect(okBody(still.rest)).toEqual({ id: '', dsl: '' });
  });

  it('POST model appends a version {id (ULID), dsl as submitted}; GET returns the newest', async () => {
    const ids: string[] = [];
    for (const s of SURFACES) {
      const body = okBody(await authzPerform(s, d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: admin }));
      expect(body.dsl).toBe(DOCS_MODEL);
      expect(body.id).toMatch(ULID);
      ids.push(body.id);
    }
    expect(new Set(ids).size).toBe(3);
    expect([...ids].sort()).toEqual(ids);
    const got = await onAll(d, { op: '_fga_get_model', creds: admin });
    for (const s of SURFACES) expect(okBody(got[s])).toEqual({ id: ids[2], dsl: DOCS_MODEL });
  });

  it('tuples: write is idempotent, invalid tuples are refused whole, delete removes them', async () => {
    const batch = tuples(6, 'w');
    const w = await onAll(d, { op: '_fga_write_tuples', args: { tuples: batch }, creds: admin });
    expect(okBody(w.rest)).toEqual({ message: 'Tuples written successfully' });
    const bad = await onAll(d, { op: '_fga_write_tuples', args: { tuples: [{ user: 'user:x', relation: 'viewer', object: 'doc:ok' }, { user: 'user:x', relation: 'approver', object: 'doc:bad' }] }, creds: admin });
    expect(bad.rest.ok ? '' : `${bad.rest.code} ${bad.rest.message}`).toMatch(/^invalid_argument invalid tuple "user:x approver doc:bad": /);
    expect(await readAll(d.grpcAddress, d.adminSecret, { object: 'doc:ok' })).toEqual([]);
    const none = await onAll(d, { op: '_fga_write_tuples', args: { tuples: [] }, creds: admin });
    expectAllError(none, 'invalid_argument', 'at least one tuple is required');
    const many = await onAll(d, { op: '_fga_write_tuples', args: { tuples: tuples(101, 'm') }, creds: admin });
    expectAllError(many, 'invalid_argument', 'too many tuples: max 100 per request');
    const del = await onAll(d, { op: '_fga_delete_tuples', args: { tuples: batch.slice(0, 2) }, creds: admin });
    expect(okBody(del.grpc)).toEqual({ message: 'Tuples deleted successfully' });
    const left = await readAll(d.grpcAddress, d.adminSecret, { object: 'doc:' });
    expect(left.map((t) => t.object).sort()).toEqual(['doc:w2', 'doc:w3', 'doc:w4', 'doc:w5']);
    await onAll(d, { op: '_fga_delete_tuples', args: { tuples: batch.slice(2) }, creds: admin });
    expect(await readAll(d.grpcAddress, d.adminSecret)).toEqual([]);
  });

  it('read: filters, page_size, continuation_token, and the page_size bounds', async () => {
    const batch = tuples(12, 'r');
    await onAll(d, { op: '_fga_write_tuples', args: { tuples: batch }, creds: admin });
    const byUser = await onAll(d, { op: '_fga_read_tuples', args: { user: 'user:r1' }, creds: admin });
    const key = (t: WireTuple): string => `${t.object}#${t.relation}@${t.user}`;
    const r1 = okBody(byUser.rest);
    expect(r1.continuation_token).toBeNull();
    expect(r1.tuples.map(key).sort()).toEqual(batch.filter((t) => t.user === 'user:r1').map(key).sort());
    const combo = await onAll(d, { op: '_fga_read_tuples', args: { user: 'user:r0', relation: 'owner', object: 'doc:' }, creds: admin });
    expect(okBody(combo.graphql).tuples).toHaveLength(batch.filter((t) => t.user === 'user:r0' && t.relation === 'owner').length);
    const exact = await onAll(d, { op: '_fga_read_tuples', args: { object: 'doc:r7' }, creds: admin });
    expect(okBody(exact.grpc).tuples).toEqual([{ ...batch[7], condition: null }]);
    for (const s of SURFACES) {
      const seen: WireTuple[] = [];
      let token: string | null = null;
      let pages = 0;
      do {
        const page: Record<string, any> = okBody(await authzPerform(s, d, { op: '_fga_read_tuples', args: { object: 'doc:', page_size: 5, ...(token ? { continuation_token: token } : {}) }, creds: admin }));
        expect(page.tuples.length).toBeLessThanOrEqual(5);
        seen.push(...page.tuples);
        token = page.continuation_token;
        pages++;
      } while (token);
      expect({ s, pages }).toEqual({ s, pages: 3 });
      expect(seen.map(key).sort()).toEqual(batch.map(key).sort());
    }
    const firstPage = okBody(await authzPerform('rest', d, { op: '_fga_read_tuples', args: { object: 'doc:', page_size: 5 }, creds: admin }));
    const mismatch = await onAll(d, { op: '_fga_read_tuples', args: { user: 'user:r0', page_size: 5, continuation_token: firstPage.continuation_token }, creds: admin });
    expectAllError(mismatch, 'invalid_argument', 'invalid continuation token');
    for (const page_size of [101, -1]) {
      const bad = await onAll(d, { op: '_fga_read_tuples', args: { page_size }, creds: admin });
      expectAllError(bad, 'invalid_argument', 'page_size must be between 1 and 100');
    }
    const dflt = await onAll(d, { op: '_fga_read_tuples', args: { page_size: 0 }, creds: admin });
    expect(okBody(dflt.rest).tuples).toHaveLength(12);
  });

  it('list_users returns fully-qualified subjects (and a wildcard) with `truncated`; expand returns a JSON tree', async () => {
    await onAll(d, { op: '_fga_write_tuples', args: { tuples: [
      { user: 'user:lu1', relation: 'owner', object: 'doc:lu' },
      { user: 'group:eng#member', relation: 'editor', object: 'doc:lu' },
      { user: 'user:lu2', relation: 'member', object: 'group:eng' },
    ] }, creds: admin });
    const lu = await onAll(d, { op: '_fga_list_users', args: { object: 'doc:lu', relation: 'viewer', user_type: 'user' }, creds: admin });
    const body = okBody(lu.rest);
    expect({ users: [...body.users].sort(), truncated: body.truncated }).toEqual({ users: ['user:lu1', 'user:lu2'], truncated: false });
    await onAll(d, { op: '_fga_write_tuples', args: { tuples: [{ user: 'user:*', relation: 'viewer', object: 'doc:lu' }] }, creds: admin });
    const withStar = okBody((await onAll(d, { op: '_fga_list_users', args: { object: 'doc:lu', relation: 'viewer', user_type: 'user' }, creds: admin })).grpc);
    expect([...withStar.users].sort()).toEqual(['user:*', 'user:lu1', 'user:lu2']);
    const missing = await onAll(d, { op: '_fga_list_users', args: { object: 'doc:lu', relation: 'viewer', user_type: '' }, creds: admin });
    expectAllError(missing, 'invalid_argument', 'object, relation and user_type are required');

    const ex = await onAll(d, { op: '_fga_expand', args: { relation: 'editor', object: 'doc:lu' }, creds: admin });
    const tree = JSON.parse(okBody(ex.rest).tree as string) as unknown;
    expect(typeof tree).toBe('object');
    expect(JSON.stringify(tree)).toContain('group:eng#member');
    expect(JSON.stringify(tree)).toContain('owner');
    const exMissing = await onAll(d, { op: '_fga_expand', args: { relation: '', object: 'doc:lu' }, creds: admin });
    expectAllError(exMissing, 'invalid_argument', 'relation and object are required');

    // extension: contextual tuples count as stored for this expansion only (OpenFGA ExpandRequest.contextual_tuples)
    const withCtx = await onAll(d, { op: '_fga_expand', args: { relation: 'editor', object: 'doc:lu', contextual_tuples: [{ user: 'user:ctx-editor', relation: 'editor', object: 'doc:lu' }] }, creds: admin });
    for (const s of SURFACES) expect({ s, tree: okBody(withCtx[s]).tree as string }).toEqual({ s, tree: expect.stringContaining('"user:ctx-editor"') });
    expect(okBody(ex.rest).tree).not.toContain('user:ctx-editor');
    const stored = okBody(await authzPerform('rest', d, { op: '_fga_read_tuples', args: { user: 'user:ctx-editor' }, creds: admin }));
    expect(stored.tuples).toEqual([]);
    const badCtx = await onAll(d, { op: '_fga_expand', args: { relation: 'editor', object: 'doc:lu', contextual_tuples: [{ user: 'user:x', relation: 'nope', object: 'doc:lu' }] }, creds: admin });
    for (const s of SURFACES) {
      const r = badCtx[s];
      expect({ s, got: r.ok ? { ok: true } : { code: r.code, message: r.message } })
        .toEqual({ s, got: { code: 'invalid_argument', message: expect.stringContaining('invalid tuple "user:x nope doc:lu"') } });
    }
  });

  it('a user or an anonymous caller on /v1/admin/fga/* is 401 unauthenticated `unauthorized`', async () => {
    const calls: Array<[AuthzOp, Record<string, unknown>]> = [
      ['_fga_get_model', {}], ['_fga_write_model', { dsl: DOCS_MODEL }],
      ['_fga_write_tuples', { tuples: tuples(1, 'u') }], ['_fga_delete_tuples', { tuples: tuples(1, 'u') }],
      ['_fga_read_tuples', {}], ['_fga_list_users', { object: 'doc:lu', relation: 'viewer', user_type: 'user' }],
      ['_fga_expand', { relation: 'viewer', object: 'doc:lu' }], ['_fga_reset', {}],
    ];
    for (const [op, args] of calls) {
      expectAllError(await onAll(d, { op, args, creds: { bearer: user.token } }), 'unauthenticated', 'unauthorized');
      expectAllError(await onAll(d, { op, args }), 'unauthenticated', 'unauthorized');
      // 8 wrong secrets reach the public gRPC port from its socket peer, fewer than the 10 that lock it
      expectAllError(await onAll(d, { op, args, creds: { adminSecret: `${d.adminSecret}x`, forwardedFor: `10.66.0.${calls.findIndex(([o]) => o === op) + 1}` } }), 'unauthenticated', 'unauthorized');
    }
    expect((await readAll(d.grpcAddress, d.adminSecret, { object: 'doc:u0' }))).toEqual([]);
  });

  it('the internal DeleteUserTuples RPC (native gRPC, admin only) removes every tuple naming user:<id>', async () => {
    const gone = `gone${randomBytes(4).toString('hex')}`;
    const kept = { user: 'user:kept', relation: 'viewer', object: `doc:${gone}` };
    const naming = [{ user: `user:${gone}`, relation: 'owner', object: `doc:${gone}` }, { user: `user:${gone}`, relation: 'member', object: `group:${gone}` }];
    okBody(await authzPerform('rest', d, { op: '_fga_write_tuples', args: { tuples: [...naming, kept] }, creds: admin }));
    const client = authzGrpcClient(d.grpcAddress);
    const call = (headers: Record<string, string>, req: Record<string, unknown>): Promise<unknown> =>
      client.call('DeleteUserTuples', req, createCallContext({ headers }));
    await expect(call({ authorization: `Bearer ${user.token}` }, { user_id: gone })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(call({ 'x-service-admin-secret': d.adminSecret }, {})).rejects.toMatchObject({ code: 'invalid_argument', message: 'user ID is missing' });
    expect(await readAll(d.grpcAddress, d.adminSecret, { user: `user:${gone}` })).toHaveLength(2);
    await expect(call({ 'x-service-admin-secret': d.adminSecret }, { user_id: gone })).resolves.toEqual({ deleted: 2 });
    expect(await readAll(d.grpcAddress, d.adminSecret, { user: `user:${gone}` })).toEqual([]);
    expect(await readAll(d.grpcAddress, d.adminSecret, { object: `doc:${gone}` })).toEqual([kept]);
    okBody(await authzPerform('rest', d, { op: '_fga_delete_tuples', args: { tuples: [kept] }, creds: admin }));
  });

  it('reset is refused while tuples exist, allowed once they are deleted, and empties the store', async () => {
    const refused = await onAll(d, { op: '_fga_reset', creds: admin });
    expectAllError(refused, 'failed_precondition', 'remove all relationship tuples before resetting the authorization model');
    expect((await readAll(d.grpcAddress, d.adminSecret)).length).toBeGreaterThan(0);
    expect(await deleteAllTuples(d.grpcAddress, d.adminSecret)).toBeGreaterThan(0);
    const ok = await onAll(d, { op: '_fga_reset', creds: admin });
    for (const s of SURFACES) expect(okBody(ok[s])).toEqual({ message: 'Authorization model reset successfully' });
    const empty = await onAll(d, { op: '_fga_get_model', creds: admin });
    for (const s of SURFACES) expect(okBody(empty[s])).toEqual({ id: '', dsl: '' });
    const check = await onAll(d, { op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:lu' }] }, creds: { bearer: user.token } });
    expectAllError(check, 'failed_precondition', 'no authorization model is installed');
  });
});
