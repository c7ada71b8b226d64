/**
 * Unit tests of the SCIM parts that need no deployment: the one-term filter of behaviour.md §6.4 (on
 * scim2-parse-filter), PatchOp parsing as Entra ID and Okta send it, and the 501 answer of group
 * provisioning when the authorization engine is off (a deployment without authz's internal API, or
 * authz answering `failed_precondition`).
 */
import { describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { createCallContext } from '@gatehouse/rpc';
import type { ScimDeps } from './deps.ts';
import { createEndpoint } from './endpoints.ts';
import { ScimError } from './errors.ts';
import { matches, parseFilter } from './filter.ts';
import { patchOperations, scimBoolean, valueEq, valuePath } from './patch.ts';
import { handleScim } from './server.ts';
import type { ScimEndpointRecord } from './storage/ports.ts';

const USER_ATTRS = ['username', 'emails.value', 'name.givenname', 'name.familyname', 'active', 'externalid'];
const scimTypeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (err) {
    return err instanceof ScimError ? `${err.status} ${err.scimType}` : 'not a ScimError';
  }
  return undefined;
};

describe('the one-term SCIM filter (behaviour.md §6.4)', () => {
  it('parses each allowed attribute and operator, case-insensitively', () => {
    expect(parseFilter('userName eq "Ada@Example.com"', USER_ATTRS)).toEqual({ attr: 'username', op: 'eq', value: 'Ada@Example.com' });
    expect(parseFilter('EMAILS.VALUE co "example"', USER_ATTRS)).toEqual({ attr: 'emails.value', op: 'co', value: 'example' });
    expect(parseFilter('name.familyName sw "Lo"', USER_ATTRS).op).toBe('sw');
    expect(parseFilter('externalId pr', USER_ATTRS)).toEqual({ attr: 'externalid', op: 'pr', value: null });
    expect(parseFilter('active eq false', USER_ATTRS, ['active'])).toEqual({ attr: 'active', op: 'eq', value: false });
    expect(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName ne "x"', USER_ATTRS).attr).toBe('username');
  });

  it.each([
    'userName eq "a" and active eq true', 'userName eq "a" or userName eq "b"', 'not (userName eq "a")', '(userName eq "a")',
    'emails[type eq "work"]', 'userName gt "a"', 'userName ew "a"', 'title eq "a"', 'userName eq', 'userName eq "open', 'eq "a"',
    'userName eq 3',
  ])('refuses %s with 400 invalidFilter', (f) => {
    expect(scimTypeOf(() => parseFilter(f, USER_ATTRS, ['active']))).toBe('400 invalidFilter');
  });

  it('refuses co/sw and string values on booleans', () => {
    expect(scimTypeOf(() => parseFilter('active co "t"', USER_ATTRS, ['active']))).toBe('400 invalidFilter');
    expect(scimTypeOf(() => parseFilter('active eq "true"', USER_ATTRS, ['active']))).toBe('400 invalidFilter');
  });

  it('keeps brackets inside quoted values', () => {
    expect(parseFilter('userName eq "a(b)[c]@example.com"', USER_ATTRS).value).toBe('a(b)[c]@example.com');
  });

  it('matches strings case-insensitively', () => {
    const t = parseFilter('userName sw "ADA"', USER_ATTRS);
    expect([matches(t, 'ada@example.com'), matches(t, 'bob@example.com'), matches(t, null)]).toEqual([true, false, false]);
    const pr = parseFilter('externalId pr', USER_ATTRS);
    expect([matches(pr, 'x'), matches(pr, ''), matches(pr, null)]).toEqual([true, false, false]);
  });
});

describe('PatchOp bodies as providers send them (RFC 7644 §3.5.2)', () => {
  const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
  it("lower-cases Entra ID's capitalised ops and keeps Okta's no-path form", () => {
    expect(patchOperations({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] })).toEqual([{ op: 'replace', path: 'active', value: 'False' }]);
    expect(patchOperations({ schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] })).toEqual([{ op: 'replace', path: null, value: { active: false } }]);
  });
  it.each([
    [null], [[]], [{ Operations: [] }], [{ schemas: [PATCH] }], [{ schemas: [PATCH], Operations: [{}] }],
    [{ schemas: [PATCH], Operations: [{ op: 'add', path: 'x' }] }], [{ schemas: [PATCH], Operations: [{ op: 'add', path: 3, value: 1 }] }],
  ])('refuses %j with 400 invalidSyntax', (body) => {
    expect(scimTypeOf(() => patchOperations(body))).toBe('400 invalidSyntax');
  });
  it('reads "True"/"False" and booleans; anything else is invalidValue', () => {
    expect([scimBoolean('False', 'active'), scimBoolean('true', 'active'), scimBoolean(true, 'active')]).toEqual([false, true, true]);
    expect(scimTypeOf(() => scimBoolean('no', 'active'))).toBe('400 invalidValue');
  });
  it('parses value paths with the filter grammar', () => {
    const vp = valuePath('members[value eq "2819c223"]')!;
    expect([vp.attr, vp.sub, valueEq(vp.filter)]).toEqual(['members', null, '2819c223']);
    expect(valuePath('emails[type eq "work"].value')!.sub).toBe('value');
    expect(valuePath('userName')).toBeNull();
    expect(scimTypeOf(() => valuePath('members[value eq "x"'))).toBe('400 invalidPath');
  });
});

describe('group provisioning needs the authorization engine (behaviour.md §6.4)', () => {
  const endpoints = new Map<string, ScimEndpointRecord>();
  const deps = (authz: ScimDeps['authz']): ScimDeps => ({
    store: {
      endpoints: {
        byOrg: async (orgId) => [...endpoints.values()].find((e) => e.orgId === orgId) ?? null,
        byId: async (id) => endpoints.get(id) ?? null,
        insert: async (e) => { endpoints.set(e.id, e); return true; },
        update: async (e) => { endpoints.set(e.id, e); },
        delete: async () => true,
      },
      users: { get: async () => null, byExternalId: async () => null, put: async () => undefined, list: async () => [] },
      groups: { get: async () => null, byDisplayName: async () => null, byExternalId: async () => null, list: async () => [], insert: async () => true, update: async () => true, delete: async () => true },
    },
    orgs: { status: async () => 'enabled', isMember: async () => false, addMember: async () => undefined, memberIds: async () => [] },
    authn: null, authz, emit: () => undefined, tokenKey: 'k'.repeat(32), baseUrl: 'https://id.example.com', now: () => 1_700_000_000,
  });
  const call = async (d: ScimDeps, token: string, method: string, path: string, body = '') =>
    handleScim(d, createCallContext(), { method, path, query: '', body, authorization: `Bearer ${token}` }, () => undefined);

  it.each([
    ['no authz address', null],
    ['authz answering failed_precondition', {
      GetModel: async () => { throw new AppError('failed_precondition', 'authorization engine is not enabled'); },
      WriteTuples: async () => ({ message: '' }), DeleteTuples: async () => ({ message: '' }),
    }],
  ] as const)('%s → 501 on every Groups route', async (_label, authz) => {
    const d = deps(authz as ScimDeps['authz']);
    const { token } = await createEndpoint(d, '6f1c7a3e-0000-4000-8000-000000000001');
    for (const [method, path, body] of [['GET', '/Groups', ''], ['POST', '/Groups', '{"displayName":"x"}'], ['GET', '/Groups/x', ''], ['DELETE', '/Groups/x', '']] as const) {
      const r = await call(d, token, method, path, body);
      expect({ path, status: r.status, body: JSON.parse(r.body) }).toEqual({
        path, status: 501, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '501', detail: 'group provisioning is not enabled on this server' },
      });
    }
  });

  it('a token of the wrong shape, a wrong secret and no header are 401 alike', async () => {
    const d = deps(null);
    const { token } = await createEndpoint(d, '6f1c7a3e-0000-4000-8000-000000000002');
    for (const t of ['', 'x', `${token}x`, `${token.split('.')[0]}.${'0'.repeat(64)}`]) {
      const r = await call(d, t, 'GET', '/ServiceProviderConfig');
      expect({ t, status: r.status, detail: JSON.parse(r.body).detail }).toEqual({ t, status: 401, detail: 'authentication failed' });
    }
    expect((await call(d, token, 'GET', '/ServiceProviderConfig')).status).toBe(200);
  });
});
