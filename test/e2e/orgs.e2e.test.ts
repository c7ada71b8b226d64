/**
 * @module test/e2e/orgs
 * Organizations, members and domains (issue 19; behaviour.md §6.1, §6.2, §5.1, §5.7, §10) in both
 * modes, on REST, GraphQL and native gRPC: each route's happy path and each refusal with its exact
 * status and message; the org-admin gate (an org admin of X is refused on Y and on the super-admin
 * operations, and allowed on X); domain verification against a DNS server of the test's own on
 * 127.0.0.1 (npm `dns2`) reached through `--dns-resolver` (no test queries public DNS); deletion of an
 * organization leaving no org-scoped row in any table; a deleted user's memberships going; the audit
 * rows with their `_failed` twins; and bad input on every org route answering 4xx, never 5xx.
 */
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { freePort, startDeployment, type Deployment } from '@gatehouse/testing';
import { gql, postJson } from '../support/http.ts';
import { openSql } from '../support/sql.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';
import { Packet, createServer } from 'dns2';

type Surface = 'rest' | 'graphql' | 'grpc';
type Answer = { ok: true; body: any; status: number } | { ok: false; code: string; message: string; status: number };

const ORG = 'id name display_name enabled created_at updated_at';
const PAGE = 'pagination { page limit offset total }';
const MEMBER = 'id org_id user_id email given_name family_name roles created_at updated_at';
const DOMAIN = 'domain org_id verified_at challenge_expires_at created_at updated_at';
const CHALLENGE = 'domain record_type record_name record_value expires_at';

/** REST path (under /v1/admin) → GraphQL field, input type, operation kind, selection; and the RPC. */
const OPS: Record<string, { rpc: string; input: string; kind: 'query' | 'mutation'; select: string; optional?: boolean }> = {
  create_organization: { rpc: 'CreateOrganization', input: 'CreateOrganizationRequest', kind: 'mutation', select: ORG },
  update_organization: { rpc: 'UpdateOrganization', input: 'UpdateOrganizationRequest', kind: 'mutation', select: ORG },
  delete_organization: { rpc: 'DeleteOrganization', input: 'OrganizationRequest', kind: 'mutation', select: 'message' },
  organization: { rpc: 'Organization', input: 'OrganizationRequest', kind: 'query', select: ORG },
  organizations: { rpc: 'Organizations', input: 'ListOrganizationsRequest', kind: 'query', select: `organizations { ${ORG} } ${PAGE}`, optional: true },
  add_org_member: { rpc: 'AddOrgMember', input: 'AddOrgMemberRequest', kind: 'mutation', select: MEMBER },
  update_org_member: { rpc: 'UpdateOrgMember', input: 'UpdateOrgMemberRequest', kind: 'mutation', select: MEMBER },
  remove_org_member: { rpc: 'RemoveOrgMember', input: 'RemoveOrgMemberRequest', kind: 'mutation', select: 'message' },
  org_members: { rpc: 'OrgMembers', input: 'ListOrgMembersRequest', kind: 'query', select: `org_members { ${MEMBER} } ${PAGE}` },
  user_organizations: { rpc: 'UserOrganizations', input: 'UserOrganizationsRequest', kind: 'query', select: `user_organizations { organization { ${ORG} } roles } ${PAGE}` },
  request_org_domain: { rpc: 'RequestOrgDomain', input: 'RequestOrgDomainRequest', kind: 'mutation', select: CHALLENGE },
  verify_org_domain: { rpc: 'VerifyOrgDomain', input: 'VerifyOrgDomainRequest', kind: 'mutation', select: DOMAIN },
  add_verified_org_domain: { rpc: 'AddVerifiedOrgDomain', input: 'AddVerifiedOrgDomainRequest', kind: 'mutation', select: DOMAIN },
  delete_org_domain: { rpc: 'DeleteOrgDomain', input: 'DeleteOrgDomainRequest', kind: 'mutation', select: 'message' },
  org_domains: { rpc: 'OrgDomains', input: 'ListOrgDomainsRequest', kind: 'query', select: `org_domains { ${DOMAIN} } ${PAGE}` },
};

/** GraphQL `extensions.code` → the REST code (behaviour.md §0.1). */
const lower = (code: string): string => code.toLowerCase();

/** A TXT server for the test: `records` maps a name to its TXT strings; unknown names are NXDOMAIN. */
async function startTxtServer(port: number): Promise<{ records: Map<string, string[][]>; close(): Promise<void> }> {
  const records = new Map<string, string[][]>();
  const server = createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const found = question ? records.get(question.name.toLowerCase()) : undefined;
      if (!question || !found) response.header.rcode = 3;
      else for (const data of found) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 0, data } as never);
      void send(response);
    },
  });
  await server.listen({ udp: { port, address: '127.0.0.1' } });
  let closed = false;
  return {
    records,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
}

describe.each(['all', 'split'] as const)('organizations, members and domains (%s)', (mode) => {
  let d: Deployment;
  let dns: Awaited<ReturnType<typeof startTxtServer>>;
  let dnsPort: number;
  let admin: Record<string, string>;
  let seq = 0;

  beforeAll(async () => {
    dnsPort = await freePort();
    dns = await startTxtServer(dnsPort);
    d = await startDeployment(mode, { flags: [`--dns-resolver=127.0.0.1:${dnsPort}`, '--rate-limit-rps=0'], readyTimeoutMs: 90_000 });
    admin = { 'x-service-admin-secret': d.adminSecret };
  }, 150_000);
  afterAll(async () => {
    await d?.stop();
    await dns?.close();
  });

  /** One orgs operation on one surface, answered in one shape. */
  async function call(op: string, args: Record<string, unknown>, headers: Record<string, string>, surface: Surface = 'rest'): Promise<Answer> {
    const spec = OPS[op]!;
    if (surface === 'rest') {
      const res = await postJson(`${d.url}/v1/admin/${op}`, args, { origin: d.url, ...headers });
      return res.status === 200 ? { ok: true, body: res.body, status: 200 } : { ok: false, code: res.body.code, message: res.body.message, status: res.status };
    }
    if (surface === 'graphql') {
      const q = `${spec.kind}($p: ${spec.input}${spec.optional ? '' : '!'}) { _${op}(params: $p) { ${spec.select} } }`;
      const res = await gql(d.url, q, { p: args }, { origin: d.url, ...headers });
      const body = res.body as { data?: Record<string, unknown>; errors?: Array<{ message: string; extensions: { code: string } }> };
      if (body.errors?.length) return { ok: false, code: lower(body.errors[0]!.extensions.code), message: body.errors[0]!.message, status: res.status };
      return { ok: true, body: body.data![`_${op}`], status: res.status };
    }
    const client = createGrpcClient(serviceDescriptor('orgs'), { address: d.grpcAddress });
    try {
      const body = await client.call(spec.rpc, args, createCallContext({ headers, protocol: 'grpc' }));
      return { ok: true, body, status: 200 };
    } catch (err) {
      const e = err as { code: string; message: string };
      return { ok: false, code: e.code, message: e.message, status: 0 };
    }
  }
  const ok = async (op: string, args: Record<string, unknown>, headers = admin, surface: Surface = 'rest'): Promise<any> => {
    const a = await call(op, args, headers, surface);
    if (!a.ok) throw new Error(`${op} on ${surface}: ${a.code} ${a.message}`);
    return a.body;
  };
  const refused = async (op: string, args: Record<string, unknown>, status: number, code: string, message: string, headers = admin): Promise<void> => {
    for (const surface of ['rest', 'graphql', 'grpc'] as const) {
      const a = await call(op, args, headers, surface);
      expect({ op, surface, answer: a.ok ? a.body : { code: a.code, message: a.message } }).toEqual({ op, surface, answer: { code, message } });
      if (surface === 'rest') expect({ op, status: a.status }).toEqual({ op, status });
    }
  };
  const name = (tag: string): string => `${tag}-${mode}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;
  const newOrg = async (tag = 'org'): Promise<{ id: string; name: string }> => ok('create_organization', { name: name(tag) });
  const newUser = async (given = 'Ada'): Promise<{ id: string; email: string; token: string }> => {
    const email = freshEmail('orgs');
    const s = await postJson(`${d.url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD, given_name: given, family_name: 'Lovelace' }, { origin: d.url });
    expect(s.status).toBe(200);
    const l = await postJson(`${d.url}/v1/login`, { email, password: PASSWORD }, { origin: d.url });
    expect(l.status).toBe(200);
    return { id: s.body.user.id as string, email, token: l.body.access_token as string };
  };
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
  const domainName = (tag: string): string => `${tag}-${mode}-${++seq}-${Math.random().toString(36).slice(2, 7)}.example`;

  describe('organizations (§6.1)', () => {
    it('create, get, update and list answer alike on REST, GraphQL and gRPC', async () => {
      for (const surface of ['rest', 'graphql', 'grpc'] as const) {
        const n = name(`acme-${surface}`);
        const org = await ok('create_organization', { name: n, display_name: 'Acme Inc' }, admin, surface);
        expect(org).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: n, display_name: 'Acme Inc', enabled: true, created_at: expect.any(Number), updated_at: expect.any(Number) });
        expect(await ok('organization', { id: org.id }, admin, surface)).toEqual(org);
        const updated = await ok('update_organization', { id: org.id, name: `${n}-renamed`, display_name: '', enabled: false }, admin, surface);
        expect(updated).toMatchObject({ id: org.id, name: `${n}-renamed`, display_name: null, enabled: false });
        const list = await ok('organizations', { pagination: { limit: 1000 } }, admin, surface);
        expect(list.organizations.map((o: { id: string }) => o.id)).toContain(org.id);
        expect(list.pagination).toEqual({ page: 1, limit: 1000, offset: 0, total: list.organizations.length });
      }
    }, 60_000);

    it('refuses bad names, a taken name and an unknown id with the §6.1 messages', async () => {
      const org = await newOrg('taken');
      await refused('create_organization', { name: '  ' }, 400, 'invalid_argument', 'name is required');
      await refused('create_organization', { name: 'a/b' }, 400, 'invalid_argument', 'organization name must be a URL-safe slug: the character "/" is not allowed');
      await refused('create_organization', { name: 'a b' }, 400, 'invalid_argument', 'organization name must be a URL-safe slug: the character " " is not allowed');
      await refused('create_organization', { name: 'a#b' }, 400, 'invalid_argument', 'organization name must be a URL-safe slug: the character "#" is not allowed');
      await refused('create_organization', { name: org.name }, 409, 'already_exists', 'an organization with this name already exists');
      await refused('update_organization', { id: org.id, name: ' ' }, 400, 'invalid_argument', 'name cannot be empty');
      await refused('update_organization', { id: org.id, name: 'x:y' }, 400, 'invalid_argument', 'organization name must be a URL-safe slug: the character ":" is not allowed');
      const other = await newOrg('other');
      await refused('update_organization', { id: other.id, name: org.name }, 409, 'already_exists', 'an organization with this name already exists');
      await refused('organization', { id: '6f1c1d4e-0000-4000-8000-000000000000' }, 404, 'not_found', 'organization not found');
      await refused('delete_organization', { id: 'not-a-uuid' }, 404, 'not_found', 'organization not found');
      await refused('organizations', { pagination: { limit: 1001 } }, 400, 'invalid_argument', 'limit must be between 1 and 1000');
    }, 60_000);
  });

  describe('members (§6.1)', () => {
    it('adds members with trimmed, de-duplicated roles, lists them both ways, and removes them', async () => {
      const org = await newOrg('members');
      const u = await newUser('Grace');
      const m = await ok('add_org_member', { org_id: org.id, user_id: u.id, roles: [' billing ', 'billing', 'service:org_admin', ''] });
      expect(m).toEqual({
        id: expect.any(String), org_id: org.id, user_id: u.id, email: u.email, given_name: 'Grace', family_name: 'Lovelace',
        roles: ['billing', 'service:org_admin'], created_at: expect.any(Number), updated_at: expect.any(Number),
      });
      for (const surface of ['rest', 'graphql', 'grpc'] as const) {
        const list = await ok('org_members', { org_id: org.id }, admin, surface);
        expect(list).toEqual({ org_members: [m], pagination: { page: 1, limit: 10, offset: 0, total: 1 } });
        const mine = await ok('user_organizations', { user_id: u.id }, admin, surface);
        expect(mine.user_organizations).toEqual([{ organization: expect.objectContaining({ id: org.id, name: org.name }), roles: ['billing', 'service:org_admin'] }]);
      }
      await refused('add_org_member', { org_id: org.id, user_id: u.id }, 409, 'already_exists', 'user is already a member of this organization');
      await refused('add_org_member', { org_id: '6f1c1d4e-0000-4000-8000-000000000000', user_id: u.id }, 404, 'not_found', 'organization not found');
      await refused('add_org_member', { org_id: org.id, user_id: '6f1c1d4e-0000-4000-8000-000000000000' }, 404, 'not_found', 'user not found');
      expect(await ok('remove_org_member', { org_id: org.id, user_id: u.id })).toEqual({ message: 'Organization member removed successfully' });
      await refused('remove_org_member', { org_id: org.id, user_id: u.id }, 404, 'not_found', 'membership not found');
      expect((await ok('org_members', { org_id: org.id })).pagination.total).toBe(0);
    }, 60_000);

    it('update_org_member replaces a member\'s roles on REST, GraphQL and gRPC; the last org admin keeps service:org_admin unless a super-admin asks', async () => {
      const org = await newOrg('roles');
      const a = await newUser();
      const b = await newUser('Grace');
      await ok('add_org_member', { org_id: org.id, user_id: a.id, roles: ['service:org_admin'] });
      const added = await ok('add_org_member', { org_id: org.id, user_id: b.id, roles: ['billing'] });
      const rest = await ok('update_org_member', { org_id: org.id, user_id: b.id, roles: [' editor ', 'editor', 'auditor', ''] });
      expect(rest).toEqual({ ...added, roles: ['editor', 'auditor'], updated_at: expect.any(Number) });
      expect((await ok('update_org_member', { org_id: org.id, user_id: b.id, roles: ['viewer'] }, admin, 'graphql')).roles).toEqual(['viewer']);
      expect((await ok('update_org_member', { org_id: org.id, user_id: b.id, roles: [] }, admin, 'grpc')).roles).toEqual([]);
      expect((await ok('org_members', { org_id: org.id })).org_members.find((m: { user_id: string }) => m.user_id === b.id).roles).toEqual([]);
      // an org admin may edit roles in its own org, but not take the last service:org_admin away
      const as = bearer(a.token);
      expect((await ok('update_org_member', { org_id: org.id, user_id: b.id, roles: ['service:org_admin'] }, as)).roles).toEqual(['service:org_admin']);
      expect((await ok('update_org_member', { org_id: org.id, user_id: b.id, roles: ['billing'] }, as)).roles).toEqual(['billing']);
      await refused('update_org_member', { org_id: org.id, user_id: a.id, roles: ['billing'] }, 400, 'failed_precondition', 'cannot take service:org_admin from the last org admin of the organization', as);
      expect((await ok('update_org_member', { org_id: org.id, user_id: a.id, roles: ['billing'] })).roles).toEqual(['billing']);
      await refused('update_org_member', { org_id: org.id, user_id: '6f1c1d4e-0000-4000-8000-000000000000', roles: [] }, 404, 'not_found', 'membership not found');
      await refused('update_org_member', { org_id: 'not-a-uuid', user_id: b.id, roles: [] }, 404, 'not_found', 'membership not found');
      // the audit log names each change and the refused one (written after the answer, through the outbox)
      const until = Date.now() + 30_000;
      let actions: string[] = [];
      while (Date.now() < until) {
        const all = await postJson(`${d.url}/v1/admin/audit_logs`, { pagination: { limit: 1000 } }, { origin: d.url, ...admin });
        actions = (all.body.audit_logs as Array<{ action: string; metadata: string }>).filter((r) => r.metadata.includes(org.id) && r.action.startsWith('admin.org_member_upd')).map((r) => r.action);
        if (actions.filter((a) => a === 'admin.org_member_updated').length >= 6 && actions.includes('admin.org_member_update_failed')) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(actions.filter((a) => a === 'admin.org_member_updated')).toHaveLength(6);
      expect(actions.filter((a) => a === 'admin.org_member_update_failed').length).toBeGreaterThanOrEqual(1);
    }, 90_000);

    it('an org admin cannot remove the last service:org_admin; a super-admin can', async () => {
      const org = await newOrg('last');
      const a = await newUser();
      const b = await newUser();
      await ok('add_org_member', { org_id: org.id, user_id: a.id, roles: ['service:org_admin'] });
      await ok('add_org_member', { org_id: org.id, user_id: b.id, roles: ['service:org_admin'] });
      expect(await ok('remove_org_member', { org_id: org.id, user_id: b.id }, bearer(a.token))).toEqual({ message: 'Organization member removed successfully' });
      await refused('remove_org_member', { org_id: org.id, user_id: a.id }, 400, 'failed_precondition', 'cannot remove the last service:org_admin of the organization', bearer(a.token));
      expect(await ok('remove_org_member', { org_id: org.id, user_id: a.id })).toEqual({ message: 'Organization member removed successfully' });
    }, 60_000);
  });

  describe('the org-admin gate (§5.1, §6.1)', () => {
    it('an org admin of X is allowed on X and refused (401 unauthorized) on Y and on every super-admin operation', async () => {
      const x = await newOrg('x');
      const y = await newOrg('y');
      const orgAdmin = await newUser();
      const plain = await newUser();
      const other = await newUser();
      await ok('add_org_member', { org_id: x.id, user_id: orgAdmin.id, roles: ['service:org_admin'] });
      await ok('add_org_member', { org_id: x.id, user_id: plain.id, roles: ['admin'] });
      const as = bearer(orgAdmin.token);
      // its own org: allowed on every surface
      for (const surface of ['rest', 'graphql', 'grpc'] as const) {
        expect(await ok('organization', { id: x.id }, as, surface)).toMatchObject({ id: x.id });
        expect((await ok('org_members', { org_id: x.id }, as, surface)).pagination.total).toBeGreaterThanOrEqual(2);
      }
      expect(await ok('update_organization', { id: x.id, display_name: 'X by its admin' }, as)).toMatchObject({ display_name: 'X by its admin' });
      expect(await ok('add_org_member', { org_id: x.id, user_id: other.id, roles: [] }, as)).toMatchObject({ user_id: other.id });
      expect(await ok('request_org_domain', { org_id: x.id, domain: domainName('own') }, as)).toMatchObject({ record_type: 'TXT' });
      expect((await ok('org_domains', { org_id: x.id }, as)).pagination.total).toBe(1);
      // another org, a missing org, and the super-admin operations: refused alike
      const U = ['unauthenticated', 'unauthorized'] as const;
      await refused('organization', { id: y.id }, 401, ...U, as);
      await refused('organization', { id: '6f1c1d4e-0000-4000-8000-000000000000' }, 401, ...U, as);
      await refused('update_organization', { id: y.id, display_name: 'taken over' }, 401, ...U, as);
      await refused('org_members', { org_id: y.id }, 401, ...U, as);
      await refused('add_org_member', { org_id: y.id, user_id: orgAdmin.id }, 401, ...U, as);
      await refused('org_domains', { org_id: y.id }, 401, ...U, as);
      await refused('request_org_domain', { org_id: y.id, domain: domainName('theirs') }, 401, ...U, as);
      await refused('create_organization', { name: name('mine') }, 401, ...U, as);
      await refused('organizations', {}, 401, ...U, as);
      await refused('user_organizations', { user_id: orgAdmin.id }, 401, ...U, as);
      await refused('delete_organization', { id: x.id }, 401, ...U, as);
      await refused('add_verified_org_domain', { org_id: x.id, domain: domainName('skip') }, 401, ...U, as);
      // a member whose roles lack service:org_admin (a bare `admin` grants nothing) and an outsider
      await refused('organization', { id: x.id }, 401, ...U, bearer(plain.token));
      await refused('org_members', { org_id: x.id }, 401, ...U, bearer(other.token));
      // once its membership goes, so does its access
      await ok('remove_org_member', { org_id: x.id, user_id: orgAdmin.id });
      await refused('organization', { id: x.id }, 401, ...U, as);
    }, 90_000);
  });

  describe('domains (§6.2) against the test DNS server', () => {
    const publish = (challenge: { record_name: string; record_value: string }, value = challenge.record_value): void => {
      // a long value split into two character-strings: the strings concatenated are compared
      dns.records.set(challenge.record_name, [['unrelated=1'], [value.slice(0, 20), value.slice(20)]]);
    };

    it('request → publish the TXT record → verify; the domain lists, routes, and deletes', async () => {
      const org = await newOrg('dom');
      const domain = domainName('verify');
      const ch = await ok('request_org_domain', { org_id: org.id, domain: `  @${domain.toUpperCase()}. ` });
      expect(ch).toEqual({
        domain, record_type: 'TXT', record_name: `_service-challenge.${domain}`,
        record_value: expect.stringMatching(/^service-domain-verification=[a-z2-7]{52}$/), expires_at: expect.any(Number),
      });
      expect(ch.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(24 * 3600 - 60);
      const pending = (await ok('org_domains', { org_id: org.id })).org_domains;
      expect(pending).toEqual([{ domain, org_id: org.id, verified_at: null, challenge_expires_at: ch.expires_at, created_at: expect.any(Number), updated_at: expect.any(Number) }]);
      // a repeat request replaces the token
      const again = await ok('request_org_domain', { org_id: org.id, domain });
      expect(again.record_value).not.toBe(ch.record_value);
      publish(ch);
      await refused('verify_org_domain', { org_id: org.id, domain }, 400, 'failed_precondition', 'dns verification failed: challenge TXT record not found or does not match');
      publish(again);
      const verified = await ok('verify_org_domain', { org_id: org.id, domain });
      expect(verified).toMatchObject({ domain, org_id: org.id, verified_at: expect.any(Number), challenge_expires_at: null });
      await refused('request_org_domain', { org_id: org.id, domain }, 409, 'already_exists', 'domain is already verified for this organization');
      const rival = await newOrg('rival');
      await refused('request_org_domain', { org_id: rival.id, domain }, 409, 'already_exists', 'domain is already verified by another organization');
      await refused('add_verified_org_domain', { org_id: rival.id, domain }, 409, 'already_exists', 'domain is already verified by another organization');
      expect(await ok('delete_org_domain', { domain })).toEqual({ message: 'org domain deleted successfully' });
      await refused('delete_org_domain', { domain }, 404, 'not_found', 'org domain not found');
      await refused('delete_org_domain', { domain, org_id: org.id }, 404, 'not_found', 'org domain not found');
      expect((await ok('org_domains', { org_id: org.id })).pagination.total).toBe(0);
    }, 60_000);

    it('wrong value, no record and no challenge are refused with the §6.2 messages', async () => {
      const org = await newOrg('dns');
      const domain = domainName('wrong');
      await refused('verify_org_domain', { org_id: org.id, domain }, 400, 'failed_precondition', 'no pending verification challenge for this domain; request one first');
      const ch = await ok('request_org_domain', { org_id: org.id, domain });
      // no record at all: NXDOMAIN from the test server
      await refused('verify_org_domain', { org_id: org.id, domain }, 400, 'failed_precondition', 'dns verification failed: challenge TXT record not found or does not match');
      publish(ch, 'service-domain-verification=not-the-token');
      await refused('verify_org_domain', { org_id: org.id, domain }, 400, 'failed_precondition', 'dns verification failed: challenge TXT record not found or does not match');
    }, 60_000);

    it('two orgs racing for one domain: exactly one wins, the loser gets 409 and loses its pending entry', async () => {
      const a = await newOrg('race-a');
      const b = await newOrg('race-b');
      const domain = domainName('race');
      const cha = await ok('request_org_domain', { org_id: a.id, domain });
      const chb = await ok('request_org_domain', { org_id: b.id, domain });
      dns.records.set(cha.record_name, [[cha.record_value], [chb.record_value]]);
      const [ra, rb] = await Promise.all([call('verify_org_domain', { org_id: a.id, domain }, admin), call('verify_org_domain', { org_id: b.id, domain }, admin)]);
      const winners = [ra, rb].filter((r) => r.ok);
      const losers = [ra, rb].filter((r) => !r.ok);
      expect(winners).toHaveLength(1);
      expect(losers.map((r) => (r.ok ? null : { status: r.status, code: r.code, message: r.message }))).toEqual([
        { status: 409, code: 'already_exists', message: 'domain is already verified by another organization' },
      ]);
      const loser = ra.ok ? b : a;
      expect((await ok('org_domains', { org_id: loser.id })).org_domains).toEqual([]);
    }, 60_000);

    it('public suffixes, bare TLDs, consumer mail domains and malformed domains are refused; IDNA maps to ASCII', async () => {
      const org = await newOrg('guards');
      for (const domain of ['co.uk', 'github.io', 'COM.', '*.co.uk']) {
        const message = domain === 'COM.' ? 'invalid domain' : 'cannot verify a public suffix or bare TLD';
        await refused('request_org_domain', { org_id: org.id, domain }, 400, 'invalid_argument', message);
      }
      await refused('add_verified_org_domain', { org_id: org.id, domain: 'github.io' }, 400, 'invalid_argument', 'cannot verify a public suffix or bare TLD');
      for (const domain of ['gmail.com', '@Outlook.com', 'proton.me']) {
        await refused('request_org_domain', { org_id: org.id, domain }, 400, 'invalid_argument', 'cannot verify a shared consumer email domain');
      }
      for (const domain of ['https://acme.example', 'acme.example/x', 'a b.example', 'acme.example:443', 'user@', 'nodot', '']) {
        await refused('request_org_domain', { org_id: org.id, domain }, 400, 'invalid_argument', 'invalid domain');
      }
      const unicode = `bücher-${mode}-${++seq}.example`;
      const ascii = new URL(`http://${unicode}`).hostname;
      expect(ascii).toMatch(/^xn--/);
      const ch = await ok('request_org_domain', { org_id: org.id, domain: unicode });
      expect(ch).toMatchObject({ domain: ascii, record_name: `_service-challenge.${ascii}` });
      dns.records.set(ch.record_name, [[ch.record_value]]);
      // verified under its Unicode name, found under its ASCII one
      expect(await ok('verify_org_domain', { org_id: org.id, domain: unicode })).toMatchObject({ domain: ascii });
      expect(await ok('delete_org_domain', { domain: ascii, org_id: org.id })).toEqual({ message: 'org domain deleted successfully' });
      // the fixed pair of the issue
      const fixed = await ok('add_verified_org_domain', { org_id: org.id, domain: 'bücher.example' });
      expect(fixed).toMatchObject({ domain: 'xn--bcher-kva.example', org_id: org.id, verified_at: expect.any(Number) });
      expect(await ok('delete_org_domain', { domain: 'xn--bcher-kva.example' })).toEqual({ message: 'org domain deleted successfully' });
    }, 90_000);

    it('20 requests and 20 verifications per org per hour, then 429', async () => {
      const org = await newOrg('limits');
      for (let i = 0; i < 20; i++) await ok('request_org_domain', { org_id: org.id, domain: domainName(`lim${i}`) });
      const over = await call('request_org_domain', { org_id: org.id, domain: domainName('over') }, admin);
      expect(over).toEqual({ ok: false, status: 429, code: 'resource_exhausted', message: 'too many domain requests, please retry later' });
      const res = await postJson(`${d.url}/v1/admin/request_org_domain`, { org_id: org.id, domain: domainName('over') }, { origin: d.url, ...admin });
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      for (let i = 0; i < 20; i++) {
        const r = await call('verify_org_domain', { org_id: org.id, domain: domainName('none') }, admin);
        expect(r).toMatchObject({ ok: false, code: 'failed_precondition' });
      }
      expect(await call('verify_org_domain', { org_id: org.id, domain: domainName('none') }, admin))
        .toEqual({ ok: false, status: 429, code: 'resource_exhausted', message: 'too many verification attempts, please retry later' });
      // another org is not limited
      const fresh = await newOrg('limits-other');
      expect(await ok('request_org_domain', { org_id: fresh.id, domain: domainName('free') })).toMatchObject({ record_type: 'TXT' });
    }, 120_000);
  });

  describe('deleting an organization and a user', () => {
    /** every row of any table with an `org_id` column (or the organizations table) that names `orgId` */
    async function orgScopedRows(orgId: string): Promise<Record<string, number>> {
      const counts: Record<string, number> = {};
      if (d.databaseType === 'sqlite') {
        const db = new Sqlite(d.databaseUrl, { readonly: true });
        try {
          const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
          for (const { name: t } of tables) {
            const cols = (db.prepare(`PRAGMA table_info("${t}")`).all() as Array<{ name: string }>).map((c) => c.name);
            const col = cols.includes('org_id') ? 'org_id' : t === 'orgs_organizations' ? 'id' : null;
            if (col) counts[t] = (db.prepare(`SELECT COUNT(*) AS n FROM "${t}" WHERE "${col}" = ?`).get(orgId) as { n: number }).n;
          }
        } finally {
          db.close();
        }
        return counts;
      }
      const sql = await openSql(d.databaseUrl);
      try {
        const tables = await sql.query<{ table_name: string }>("SELECT table_name FROM information_schema.columns WHERE column_name = 'org_id' AND table_schema = 'public'");
        for (const { table_name: t } of [...tables, { table_name: 'orgs_organizations' }]) {
          const col = t === 'orgs_organizations' ? 'id' : 'org_id';
          counts[t] = Number((await sql.query<{ n: string }>(`SELECT COUNT(*) AS n FROM "${t}" WHERE "${col}" = $1`, [orgId]))[0]!.n);
        }
      } finally {
        await sql.close();
      }
      return counts;
    }

    it('delete_organization removes the organization, every org-scoped row and its group tuples, and frees its domain', async () => {
      const org = await newOrg('doomed');
      const u = await newUser();
      await ok('add_org_member', { org_id: org.id, user_id: u.id, roles: ['service:org_admin'] });
      const verified = domainName('doomed');
      await ok('add_verified_org_domain', { org_id: org.id, domain: verified });
      await ok('request_org_domain', { org_id: org.id, domain: domainName('pending') });
      // the org's (SCIM) groups in the engine: `group:<org_id>/<group_id>` (§6.4); another org's stay
      const fga = (path: string, body: unknown) => postJson(`${d.url}/v1/admin/fga/${path}`, body, { origin: d.url, ...admin });
      expect((await fga('model', { dsl: 'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\n' })).status).toBe(200);
      const other = await newOrg('bystander');
      const groupTuples = [
        { user: `user:${u.id}`, relation: 'member', object: `group:${org.id}/eng` },
        { user: `group:${org.id}/eng#member`, relation: 'member', object: `group:${other.id}/all` },
        { user: `user:${u.id}`, relation: 'member', object: `group:${other.id}/all` },
      ];
      expect((await fga('tuples', { tuples: groupTuples })).status).toBe(200);
      // the SAML IdP's service provider and signing key (behaviour.md §5.9) go with the org too
      expect((await postJson(`${d.url}/v1/admin/create_saml_service_provider`, { org_id: org.id, name: 'SP', entity_id: 'urn:doomed', acs_url: 'https://sp.example/acs' }, { origin: d.url, ...admin })).status).toBe(200);
      expect((await postJson(`${d.url}/v1/admin/rotate_saml_idp_cert`, { org_id: org.id }, { origin: d.url, ...admin })).status).toBe(200);
      const before = await orgScopedRows(org.id);
      expect(before).toMatchObject({ orgs_organizations: 1, orgs_members: 1, orgs_domains: 2, orgs_domain_attempts: 1, orgs_saml_service_providers: 1, orgs_saml_idp_keys: 1 });
      expect(await ok('delete_organization', { id: org.id })).toEqual({ message: 'Organization deleted successfully' });
      const after = await orgScopedRows(org.id);
      expect(Object.values(after).every((n) => n === 0)).toBe(true);
      expect(Object.keys(after)).toEqual(expect.arrayContaining(['orgs_organizations', 'orgs_members', 'orgs_domains', 'orgs_domain_attempts', 'orgs_saml_service_providers', 'orgs_saml_idp_keys']));
      await refused('organization', { id: org.id }, 404, 'not_found', 'organization not found');
      // authz consumes organization.deleted: only the other org's own tuple is left
      const until = Date.now() + 30_000;
      let left: unknown[] = [];
      while (Date.now() < until) {
        left = (await fga('tuples/read', { object: 'group:', page_size: 100 })).body.tuples as unknown[];
        if (left.length === 1) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(left).toEqual([{ ...groupTuples[2], condition: null }]);
      // its former org admin holds nothing, and another org may take the domain
      expect((await ok('user_organizations', { user_id: u.id })).user_organizations).toEqual([]);
      await refused('organization', { id: org.id }, 401, 'unauthenticated', 'unauthorized', bearer(u.token));
      const next = await newOrg('heir');
      expect(await ok('add_verified_org_domain', { org_id: next.id, domain: verified })).toMatchObject({ org_id: next.id });
    }, 60_000);

    it('a deleted user\'s memberships go (user.deleted)', async () => {
      const org = await newOrg('leaver');
      const u = await newUser();
      await ok('add_org_member', { org_id: org.id, user_id: u.id, roles: ['x'] });
      const del = await postJson(`${d.url}/v1/admin/delete_user`, { id: u.id }, { origin: d.url, ...admin });
      expect(del.status).toBe(200);
      const until = Date.now() + 30_000;
      let total = 1;
      while (Date.now() < until) {
        total = (await ok('org_members', { org_id: org.id })).pagination.total as number;
        if (total === 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(total).toBe(0);
      expect((await ok('user_organizations', { user_id: u.id })).user_organizations).toEqual([]);
    }, 60_000);
  });

  it('every org-scoped admin operation leaves its §5.7 audit row, and a refused one its _failed twin', async () => {
    const org = await newOrg('audited');
    const u = await newUser();
    await ok('add_org_member', { org_id: org.id, user_id: u.id, roles: ['service:org_admin'] });
    await call('add_org_member', { org_id: org.id, user_id: u.id }, admin);
    await ok('update_organization', { id: org.id, display_name: 'Audited' }, bearer(u.token), 'graphql');
    expect(await call('update_organization', { id: org.id, name: ' ' }, admin)).toMatchObject({ ok: false, code: 'invalid_argument' });
    const domain = domainName('audit');
    await ok('request_org_domain', { org_id: org.id, domain });
    await call('verify_org_domain', { org_id: org.id, domain }, admin);
    await ok('add_verified_org_domain', { org_id: org.id, domain });
    await ok('delete_org_domain', { domain, org_id: org.id }, admin, 'grpc');
    const until = Date.now() + 40_000;
    const wanted = [
      'admin.organization_created', 'admin.org_member_added', 'admin.org_member_add_failed', 'admin.organization_updated',
      'admin.org_domain_requested', 'admin.org_domain_verify_failed', 'admin.org_domain_verified', 'admin.org_domain_deleted',
      'admin.organization_update_failed',
    ];
    let rows: Array<{ action: string; actor_type: string; actor_id: string | null; resource_type: string; resource_id: string; metadata: string }> = [];
    while (Date.now() < until) {
      const all = await postJson(`${d.url}/v1/admin/audit_logs`, { pagination: { limit: 1000 } }, { origin: d.url, ...admin });
      rows = (all.body.audit_logs as typeof rows).filter((r) => r.resource_id === org.id || r.resource_id === domain || r.metadata.includes(org.id));
      if (wanted.every((a) => rows.some((r) => r.action === a))) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(wanted.filter((a) => !rows.some((r) => r.action === a))).toEqual([]);
    const one = (a: string) => rows.find((r) => r.action === a)!;
    expect(one('admin.organization_created')).toMatchObject({ actor_type: 'admin', actor_id: null, resource_type: 'organization', resource_id: org.id });
    expect(one('admin.organization_updated')).toMatchObject({ actor_type: 'user', actor_id: u.id, resource_type: 'organization' });
    expect(JSON.parse(one('admin.organization_updated').metadata)).toEqual({ protocol: 'graphql', changed_fields: ['display_name'] });
    expect(JSON.parse(one('admin.org_member_add_failed').metadata)).toMatchObject({ protocol: 'rest', error: 'already_exists' });
    expect(JSON.parse(one('admin.org_domain_verify_failed').metadata)).toMatchObject({ org_id: org.id, error: 'failed_precondition' });
    expect(one('admin.org_domain_deleted')).toMatchObject({ resource_type: 'org_domain', resource_id: domain });
    expect(JSON.parse(one('admin.org_domain_deleted').metadata).protocol).toBe('grpc');
  }, 90_000);

  it('bad input on every org route answers 4xx with {code, message}, never 5xx', async () => {
    const org = await newOrg('fuzz');
    const bodies: unknown[] = [
      '{', '[]', '"text"', 'null', '{"id": 5}', '{"org_id": ["x"]}', '{"name": {"a": 1}}', '{"roles": "admin"}',
      JSON.stringify({ id: 'x'.repeat(5000), org_id: org.id, user_id: '\u0000', domain: '\u00ff'.repeat(300), name: 'n'.repeat(300) }),
      JSON.stringify({ org_id: org.id, domain: 'a..b.example', user_id: 'not-a-uuid', pagination: { page: -1, limit: 'x' } }),
      JSON.stringify({ org_id: org.id, domain: `${'a'.repeat(64)}.example`, roles: [1, 2] }),
      JSON.stringify({ id: org.id, enabled: 'yes', pagination: { limit: 1e20 } }),
    ];
    for (const op of Object.keys(OPS)) {
      for (const body of bodies) {
        const res = await postJson(`${d.url}/v1/admin/${op}`, body, { origin: d.url, ...admin });
        expect({ op, body, status: res.status < 500 }).toEqual({ op, body, status: true });
        if (res.status !== 200) expect({ op, keys: Object.keys(res.body).sort() }).toEqual({ op, keys: ['code', 'message'] });
      }
    }
  }, 120_000);

  // last: the DNS server goes away for good
  it('DNS server down → dns verification failed: could not resolve the challenge TXT record', async () => {
    const org = await newOrg('down');
    const domain = domainName('down');
    await ok('request_org_domain', { org_id: org.id, domain });
    await dns.close();
    const started = Date.now();
    await refused('verify_org_domain', { org_id: org.id, domain }, 400, 'failed_precondition', 'dns verification failed: could not resolve the challenge TXT record');
    // each lookup gives up within the 5 s timeout (three surfaces)
    expect(Date.now() - started).toBeLessThan(3 * 6000);
  }, 60_000);
});
