/**
 * @module test/e2e/authz-permissions
 * check_permissions and list_permissions end to end (spec §4, §5 subject pinning, §8 limits;
 * behaviour.md §7.2, §7.3): answers in order, the subject pinned to the caller, super-admin with an
 * explicit `user`, batch limits, contextual tuples that are never persisted, and the 1000-entry cap.
 * Every step runs on REST, GraphQL and native gRPC with the answers compared, in both modes.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { SURFACES } from '../support/surfaces.ts';
import { AUTHZ_CONFIGS, backendFlags } from '../support/authz-backends.ts';
import { closeAuthzClients, expectAllError, okBody, onAll, signupUser, type AuthzCreds } from '../support/authz-surfaces.ts';
import { DOCS_MODEL, inBatches, readAll } from '../support/authz-fixtures.ts';

type Account = { token: string; id: string; subject: string };

describe.each(AUTHZ_CONFIGS)('check_permissions and list_permissions on three surfaces (%s, %s engine)', (mode, backend) => {
  let d: Deployment;
  let fga: Awaited<ReturnType<typeof backendFlags>> | undefined;
  let admin: AuthzCreds;
  let alice: Account;
  let bob: Account;
  const as = (a: Account): AuthzCreds => ({ bearer: a.token });

  beforeAll(async () => {
    fga = await backendFlags(backend);
    d = await startDeployment(mode, { flags: fga.flags });
    admin = { adminSecret: d.adminSecret };
    const tag = randomBytes(4).toString('hex');
    alice = await signupUser(d.url, `alice-${tag}@example.com`);
    bob = await signupUser(d.url, `bob-${tag}@example.com`);
    okBody((await onAll(d, { op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: admin })).rest);
    okBody((await onAll(d, { op: '_fga_write_tuples', creds: admin, args: { tuples: [
      { user: alice.subject, relation: 'owner', object: 'doc:a1' },
      { user: alice.subject, relation: 'viewer', object: 'doc:a2' },
      { user: 'group:eng#member', relation: 'editor', object: 'doc:a3' },
      { user: alice.subject, relation: 'member', object: 'group:eng' },
      { user: bob.subject, relation: 'viewer', object: 'doc:b1' },
      { user: 'user:*', relation: 'viewer', object: 'doc:pub' },
    ] } })).rest);
  }, 90_000);
  afterAll(async () => { closeAuthzClients(); await d?.stop(); await fga?.stop(); });

  const CHECKS = [
    { relation: 'viewer', object: 'doc:a1' }, { relation: 'owner', object: 'doc:a2' }, { relation: 'editor', object: 'doc:a3' },
    { relation: 'viewer', object: 'doc:b1' }, { relation: 'viewer', object: 'doc:pub' }, { relation: 'viewer', object: 'doc:a2' },
  ];
  const ALICE_ALLOWED = [true, false, true, false, true, true];
  const results = (allowed: boolean[]) => ({ results: CHECKS.map((c, i) => ({ ...c, allowed: allowed[i] })) });

  it('a user gets one result per check, in order, echoing relation and object', async () => {
    const a = await onAll(d, { op: 'check_permissions', args: { checks: CHECKS }, creds: as(alice) });
    for (const s of SURFACES) expect(okBody(a[s])).toEqual(results(ALICE_ALLOWED));
    const b = await onAll(d, { op: 'check_permissions', args: { checks: [...CHECKS].reverse() }, creds: as(bob) });
    expect(okBody(b.rest).results.map((r: { allowed: boolean }) => r.allowed)).toEqual([false, true, true, false, false, false]);
  });

  it('an explicit `user` equal to the caller (full or bare id) is honoured; another subject is 403', async () => {
    for (const user of [alice.subject, alice.id]) {
      const a = await onAll(d, { op: 'check_permissions', args: { checks: CHECKS, user }, creds: as(alice) });
      expect(okBody(a.graphql)).toEqual(results(ALICE_ALLOWED));
    }
    for (const user of [bob.subject, bob.id, 'service_account:x']) {
      const a = await onAll(d, { op: 'check_permissions', args: { checks: CHECKS, user }, creds: as(alice) });
      expectAllError(a, 'permission_denied', 'not authorized to query authorization for another subject');
      const l = await onAll(d, { op: 'list_permissions', args: { user }, creds: as(alice) });
      expectAllError(l, 'permission_denied', 'not authorized to query authorization for another subject');
    }
  });

  it('a super-admin must name the subject; a bare id means user:<id>', async () => {
    const none = await onAll(d, { op: 'check_permissions', args: { checks: CHECKS }, creds: admin });
    expectAllError(none, 'invalid_argument', 'user is required when calling as super-admin');
    const listNone = await onAll(d, { op: 'list_permissions', args: {}, creds: admin });
    expectAllError(listNone, 'invalid_argument', 'user is required when calling as super-admin');
    for (const user of [bob.subject, bob.id]) {
      const a = await onAll(d, { op: 'check_permissions', args: { checks: CHECKS, user }, creds: admin });
      expect(okBody(a.grpc)).toEqual(results([false, false, false, true, true, false]));
    }
    // behaviour.md §7.2: a super-admin may name a userset (evaluated as OpenFGA does)
    const userset = await onAll(d, { op: 'check_permissions', args: { checks: CHECKS, user: 'group:eng#member' }, creds: admin });
    expect(okBody(userset.grpc)).toEqual(results([false, false, true, false, false, false]));
  });

  it('batch limits: 0 checks, 101 checks, blank fields, too many contextual tuples', async () => {
    expectAllError(await onAll(d, { op: 'check_permissions', args: { checks: [] }, creds: as(alice) }), 'invalid_argument', 'at least one check is required');
    const many = Array.from({ length: 101 }, (_, i) => ({ relation: 'viewer', object: `doc:n${i}` }));
    expectAllError(await onAll(d, { op: 'check_permissions', args: { checks: many }, creds: as(alice) }), 'invalid_argument', 'too many checks: max 100 per request');
    const hundred = okBody((await onAll(d, { op: 'check_permissions', args: { checks: many.slice(0, 100) }, creds: as(alice) })).rest);
    expect(hundred.results).toHaveLength(100);
    expectAllError(await onAll(d, { op: 'check_permissions', args: { checks: [{ relation: '', object: 'doc:a1' }] }, creds: as(alice) }), 'invalid_argument', 'each check requires relation and object');
    const ctx = Array.from({ length: 101 }, (_, i) => ({ user: alice.subject, relation: 'viewer', object: `doc:c${i}` }));
    expectAllError(await onAll(d, { op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:c0', contextual_tuples: ctx }] }, creds: as(alice) }), 'invalid_argument', 'too many contextual tuples: max 100 per check');
  });

  it('contextual tuples apply to their own check only and are never persisted', async () => {
    const ctxTuple = { user: alice.subject, relation: 'viewer', object: 'doc:ctx' };
    const a = await onAll(d, { op: 'check_permissions', creds: as(alice), args: { checks: [
      { relation: 'viewer', object: 'doc:ctx', contextual_tuples: [ctxTuple] },
      { relation: 'viewer', object: 'doc:ctx' },
      { relation: 'editor', object: 'doc:ctx', contextual_tuples: [{ user: 'group:eng#member', relation: 'editor', object: 'doc:ctx' }] },
    ] } });
    for (const s of SURFACES) {
      expect(okBody(a[s]).results.map((r: { allowed: boolean }) => r.allowed)).toEqual([true, false, true]);
    }
    expect(await readAll(d.grpcAddress, d.adminSecret, { object: 'doc:ctx' })).toEqual([]);
    const after = await onAll(d, { op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:ctx' }] }, creds: as(alice) });
    expect(okBody(after.rest).results[0].allowed).toBe(false);
  });

  it('unauthenticated callers are 401', async () => {
    expectAllError(await onAll(d, { op: 'check_permissions', args: { checks: CHECKS } }), 'unauthenticated', 'unauthorized');
    expectAllError(await onAll(d, { op: 'list_permissions', args: {} }), 'unauthenticated', 'unauthorized');
    expectAllError(await onAll(d, { op: 'check_permissions', args: { checks: CHECKS }, creds: { bearer: 'not-a-token' } }), 'unauthenticated', 'unauthorized');
  });

  it('list_permissions: an empty body returns every permission, sorted; filters narrow it', async () => {
    const all = await onAll(d, { op: 'list_permissions', args: {}, creds: as(alice) });
    const permissions = [
      ['doc:a1', 'editor'], ['doc:a3', 'editor'], ['doc:a1', 'owner'],
      ['doc:a1', 'viewer'], ['doc:a2', 'viewer'], ['doc:a3', 'viewer'], ['doc:pub', 'viewer'], ['group:eng', 'member'],
    ].map(([object, relation]) => ({ object, relation }));
    for (const s of SURFACES) {
      expect(okBody(all[s])).toEqual({ objects: ['doc:a1', 'doc:a3', 'doc:a2', 'doc:pub', 'group:eng'], permissions, truncated: false });
    }
    const viewer = okBody((await onAll(d, { op: 'list_permissions', args: { relation: 'viewer' }, creds: as(alice) })).rest);
    expect(viewer.permissions).toEqual(permissions.filter((p) => p.relation === 'viewer'));
    const group = okBody((await onAll(d, { op: 'list_permissions', args: { object_type: 'group' }, creds: as(alice) })).graphql);
    expect(group).toEqual({ objects: ['group:eng'], permissions: [{ object: 'group:eng', relation: 'member' }], truncated: false });
    const both = okBody((await onAll(d, { op: 'list_permissions', args: { relation: 'editor', object_type: 'doc', user: alice.id }, creds: as(alice) })).grpc);
    expect(both).toEqual({ objects: ['doc:a1', 'doc:a3'], permissions: permissions.filter((p) => p.relation === 'editor'), truncated: false });
    const forBob = okBody((await onAll(d, { op: 'list_permissions', args: { user: bob.id }, creds: admin })).rest);
    expect(forBob.objects).toEqual(['doc:b1', 'doc:pub']);
  });

  it('list_permissions caps at 1000 entries with `truncated: true` when more exist', async () => {
    const carol = `user:carol-${randomBytes(3).toString('hex')}`;
    const bulk = Array.from({ length: 1100 }, (_, i) => ({ user: carol, relation: 'viewer', object: `doc:bulk-${String(i).padStart(4, '0')}` }));
    await inBatches(d.grpcAddress, d.adminSecret, 'WriteTuples', bulk);
    const capped = await onAll(d, { op: 'list_permissions', args: { user: carol, relation: 'viewer', object_type: 'doc' }, creds: admin });
    for (const s of SURFACES) {
      const body = okBody(capped[s]);
      expect({ n: body.permissions.length, objects: body.objects.length, truncated: body.truncated }).toEqual({ n: 1000, objects: 1000, truncated: true });
    }
    // public doc:pub sorts after doc:bulk-*: the first 1000 entries are bulk-0000..bulk-0999
    expect(okBody(capped.rest).objects[999]).toBe('doc:bulk-0999');
    const whole = okBody((await onAll(d, { op: 'list_permissions', args: { user: carol }, creds: admin })).rest);
    expect({ n: whole.permissions.length, truncated: whole.truncated }).toEqual({ n: 1000, truncated: true });
    const narrow = okBody((await onAll(d, { op: 'list_permissions', args: { user: carol, relation: 'owner' }, creds: admin })).rest);
    expect(narrow).toEqual({ objects: [], permissions: [], truncated: false });
    await inBatches(d.grpcAddress, d.adminSecret, 'DeleteTuples', bulk.slice(150));
    const under = okBody((await onAll(d, { op: 'list_permissions', args: { user: carol, relation: 'viewer', object_type: 'doc' }, creds: admin })).graphql);
    expect({ n: under.permissions.length, truncated: under.truncated }).toEqual({ n: 151, truncated: false });
  }, 60_000);
});
