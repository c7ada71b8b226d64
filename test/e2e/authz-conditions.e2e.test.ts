/**
 * @module test/e2e/authz-conditions
 * Issue 21 extensions end to end on REST, GraphQL and native gRPC, in both modes: conditioned tuples
 * (OpenFGA schema 1.1 conditions) that grant only inside their context, `context` per call and per
 * check, contextual tuples on list_permissions, list_users with a userset filter, and super-admins
 * checking for a userset or a typed wildcard while users stay pinned (behaviour.md §7.2).
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { SURFACES } from '../support/surfaces.ts';
import { AUTHZ_CONFIGS, backendFlags } from '../support/authz-backends.ts';
import { closeAuthzClients, expectAllError, okBody, onAll, signupUser, type AuthzCreds } from '../support/authz-surfaces.ts';

type Account = { token: string; id: string; subject: string };

// doc first, then its user types: the order does not matter to the DSL
const MODEL = `model
  schema 1.1
type doc
  relations
    define editor: [user, group#member]
    define viewer: [user, user:*, group#member, user with in_network]
type group
  relations
    define member: [user, group#member]
type user
condition in_network(ip: ipaddress, cidr: string) {
  ip.in_cidr(cidr)
}
`;

describe.each(AUTHZ_CONFIGS)('authz conditions and the query surface on three surfaces (%s, %s engine)', (mode, backend) => {
  let fga: Awaited<ReturnType<typeof backendFlags>> | undefined;
  let d: Deployment;
  let admin: AuthzCreds;
  let alice: Account;
  const as = (a: Account): AuthzCreds => ({ bearer: a.token });
  const both = (allowed: boolean[], checks: Array<{ relation: string; object: string }>) => ({ results: checks.map((c, i) => ({ ...c, allowed: allowed[i] })) });

  beforeAll(async () => {
    fga = await backendFlags(backend);
    d = await startDeployment(mode, { flags: fga.flags });
    admin = { adminSecret: d.adminSecret };
    alice = await signupUser(d.url, `alice-${randomBytes(4).toString('hex')}@example.com`);
    okBody((await onAll(d, { op: '_fga_write_model', args: { dsl: MODEL }, creds: admin })).rest);
    okBody((await onAll(d, { op: '_fga_write_tuples', creds: admin, args: { tuples: [
      { user: alice.subject, relation: 'viewer', object: 'doc:office', condition: { name: 'in_network', context: { cidr: '10.0.0.0/8' } } },
      { user: 'group:eng#member', relation: 'viewer', object: 'doc:eng' },
      { user: 'group:core#member', relation: 'member', object: 'group:eng' },
      { user: alice.subject, relation: 'member', object: 'group:core' },
      { user: 'user:*', relation: 'viewer', object: 'doc:pub' },
    ] } })).rest);
  }, 90_000);
  afterAll(async () => { closeAuthzClients(); await d?.stop(); await fga?.stop(); });

  it('a conditioned tuple grants only inside its context; context per call and per check', async () => {
    const checks = [{ relation: 'viewer', object: 'doc:office' }];
    const inside = await onAll(d, { op: 'check_permissions', creds: as(alice), args: { checks, context: { ip: '10.2.3.4' } } });
    for (const s of SURFACES) expect(okBody(inside[s])).toEqual(both([true], checks));
    const outside = await onAll(d, { op: 'check_permissions', creds: as(alice), args: { checks, context: { ip: '192.168.1.9' } } });
    for (const s of SURFACES) expect(okBody(outside[s])).toEqual(both([false], checks));
    // a check's own context overrides the call's, key by key
    const perCheck = [{ relation: 'viewer', object: 'doc:office', context: { ip: '10.9.9.9' } }, { relation: 'viewer', object: 'doc:office' }];
    const mixed = await onAll(d, { op: 'check_permissions', creds: as(alice), args: { checks: perCheck, context: { ip: '172.16.0.1' } } });
    for (const s of SURFACES) expect(okBody(mixed[s]).results.map((r: { allowed: boolean }) => r.allowed)).toEqual([true, false]);
    // without the parameter it is an error, not a grant
    const missing = await onAll(d, { op: 'check_permissions', creds: as(alice), args: { checks } });
    expectAllError(missing, 'invalid_argument', `failed to evaluate relationship condition 'in_network': tuple 'doc:office#viewer@${alice.subject}' is missing context parameters '[ip]'`);
    // list_permissions takes the context too
    const listed = await onAll(d, { op: 'list_permissions', creds: as(alice), args: { relation: 'viewer', object_type: 'doc', context: { ip: '10.0.0.1' } } });
    for (const s of SURFACES) expect(okBody(listed[s]).objects).toEqual(['doc:eng', 'doc:office', 'doc:pub']);
    // the stored condition reads back on every surface
    const read = await onAll(d, { op: '_fga_read_tuples', creds: admin, args: { object: 'doc:office' } });
    for (const s of SURFACES) {
      expect(okBody(read[s]).tuples).toEqual([{ user: alice.subject, relation: 'viewer', object: 'doc:office', condition: { name: 'in_network', context: { cidr: '10.0.0.0/8' } } }]);
    }
  });

  it('contextual tuples on list_permissions apply to that call only', async () => {
    const ctx = [{ user: alice.subject, relation: 'editor', object: 'doc:draft' }];
    const withCtx = await onAll(d, { op: 'list_permissions', creds: as(alice), args: { relation: 'editor', object_type: 'doc', contextual_tuples: ctx } });
    for (const s of SURFACES) expect(okBody(withCtx[s])).toEqual({ objects: ['doc:draft'], permissions: [{ object: 'doc:draft', relation: 'editor' }], truncated: false });
    const without = await onAll(d, { op: 'list_permissions', creds: as(alice), args: { relation: 'editor', object_type: 'doc' } });
    for (const s of SURFACES) expect(okBody(without[s]).objects).toEqual([]);
    const bad = await onAll(d, { op: 'list_permissions', creds: as(alice), args: { relation: 'editor', object_type: 'doc', contextual_tuples: [{ user: 'group:eng', relation: 'editor', object: 'doc:draft' }] } });
    expectAllError(bad, 'invalid_argument', 'invalid tuple "group:eng editor doc:draft": type "group" is not allowed on relation "editor" of type "doc"');
  });

  it('list_users with a userset filter answers the usersets, nested ones included', async () => {
    const a = await onAll(d, { op: '_fga_list_users', creds: admin, args: { object: 'doc:eng', relation: 'viewer', user_type: 'group#member' } });
    for (const s of SURFACES) expect(okBody(a[s])).toEqual({ users: ['group:core#member', 'group:eng#member'], truncated: false });
    const users = await onAll(d, { op: '_fga_list_users', creds: admin, args: { object: 'doc:eng', relation: 'viewer', user_type: 'user' } });
    for (const s of SURFACES) expect(okBody(users[s]).users).toEqual([alice.subject]);
    const ctx = await onAll(d, { op: '_fga_list_users', creds: admin, args: { object: 'doc:new', relation: 'viewer', user_type: 'group#member', contextual_tuples: [{ user: 'group:core#member', relation: 'viewer', object: 'doc:new' }] } });
    for (const s of SURFACES) expect(okBody(ctx[s]).users).toEqual(['group:core#member']);
    const unknown = await onAll(d, { op: '_fga_list_users', creds: admin, args: { object: 'doc:eng', relation: 'viewer', user_type: 'group#owner' } });
    expectAllError(unknown, 'invalid_argument', 'relation "owner" is not defined on type "group"');
  });

  it('a super-admin checks for group:x#member and user:*; a user stays pinned to their own subject', async () => {
    const checks = [{ relation: 'viewer', object: 'doc:eng' }, { relation: 'viewer', object: 'doc:pub' }];
    const userset = await onAll(d, { op: 'check_permissions', creds: admin, args: { checks, user: 'group:core#member' } });
    for (const s of SURFACES) expect(okBody(userset[s])).toEqual(both([true, false], checks));
    const wildcard = await onAll(d, { op: 'check_permissions', creds: admin, args: { checks, user: 'user:*' } });
    for (const s of SURFACES) expect(okBody(wildcard[s])).toEqual(both([false, true], checks));
    const listed = await onAll(d, { op: 'list_permissions', creds: admin, args: { relation: 'viewer', object_type: 'doc', user: 'user:*' } });
    for (const s of SURFACES) expect(okBody(listed[s]).objects).toEqual(['doc:pub']);
    for (const user of ['group:core#member', 'user:*']) {
      const pinned = await onAll(d, { op: 'check_permissions', creds: as(alice), args: { checks, user } });
      expectAllError(pinned, 'invalid_argument', `user must be a concrete subject in type:id form, not a userset, got "${user}"`);
    }
  });
});
