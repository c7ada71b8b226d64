/**
 * Unit tests of the SCIM parts that need no deployment: the filter grammar compiled to SQL (on
 * scim2-parse-filter), RFC 3966 phone values, PATCH semantics (noTarget, invalidPath, mutability, value
 * paths), PatchOp parsing as Entra ID and Okta send it, and the 501 answer of group
 * provisioning when the authorization engine is off, and the SCIM events with their audit rows handed
 * to the store's transactional write (a deployment without authz's internal API, or
 * authz answering `failed_precondition`).
 */
import { describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { createCallContext } from '@gatehouse/rpc';
import type { ScimDeps } from './deps.ts';
import { createEndpoint } from './endpoints.ts';
import { ScimError } from './errors.ts';
import { compileFilter } from './filter.ts';
import { patchOperations, scimBoolean, valueEq, valuePath } from './patch.ts';
import { handleScim } from './server.ts';
import type { ScimEndpointRecord, ScimOutboxEvent } from './storage/ports.ts';
import { e164, patchModel, type UserModel } from './user-model.ts';
import { USER_FILTER } from './users.ts';

const scimTypeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (err) {
    return err instanceof ScimError ? `${err.status} ${err.scimType}` : 'not a ScimError';
  }
  return undefined;
};

describe('the SCIM filter compiled to SQL (RFC 7644 §3.4.2.2, behaviour.md §6.4)', () => {
  it('compiles comparisons case-insensitively, with the value as a parameter', () => {
    expect(compileFilter('userName eq "Ada@Example.com"', USER_FILTER)).toEqual({ sql: 'u.user_name_key = ?', params: ['ada@example.com'] });
    expect(compileFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName ne "x"', USER_FILTER)).toEqual({ sql: '(u.user_name_key is null or u.user_name_key <> ?)', params: ['x'] });
    expect(compileFilter('name.familyName sw "Lo%"', USER_FILTER)).toEqual({ sql: "lower(u.family_name) like ? escape '!'", params: ['lo!%%'] });
    expect(compileFilter('externalId eq "AbC"', USER_FILTER)).toEqual({ sql: 'u.external_id = ?', params: ['AbC'] });
    expect(compileFilter('active eq false', USER_FILTER)).toEqual({ sql: 'u.active = false', params: [] });
    expect(compileFilter('meta.lastModified gt "2024-01-01T00:00:00Z"', USER_FILTER)).toEqual({ sql: 'u.updated_at > ?', params: [1704067200] });
  });

  it('compiles and/or/not, parentheses and value paths into one condition', () => {
    const c = compileFilter('(userName sw "a" or not (active eq true)) and emails[type eq "work" and value co "@X"]', USER_FILTER);
    expect(c.sql).toBe("((u.user_name_key like ? escape '!' or (not u.active = true)) and exists (select 1 from orgs_scim_user_values v where v.org_id = u.org_id and v.user_id = u.user_id and v.attr = 'emails' and (v.type = ? and v.value_key like ? escape '!')))");
    expect(c.params).toEqual(['a%', 'work', '%@x%']);
    expect(compileFilter('emails.value ew ".org"', USER_FILTER).sql).toContain("v.attr = 'emails' and v.value_key like ? escape '!'");
    expect(compileFilter('phoneNumbers pr', USER_FILTER).sql).toContain("v.attr = 'phoneNumbers' and (v.value_key is not null and v.value_key <> '')");
  });

  it.each([
    'title eq "a"', 'userName eq', 'userName eq "open', 'eq "a"', 'userName eq 3', 'active co "t"', 'active eq "true"', 'active gt true',
    'meta.created co "2024"', 'meta.created gt "yesterday"', 'emails[title eq "x"]', 'name[givenName eq "x"]', 'emails[type eq "a" and phoneNumbers[type eq "b"]]',
  ])('refuses %s with 400 invalidFilter', (f) => {
    expect(scimTypeOf(() => compileFilter(f, USER_FILTER))).toBe('400 invalidFilter');
  });
});

describe('phone numbers (RFC 3966, E.164)', () => {
  it.each([['tel:+1-201-555-0123', '+12015550123'], ['+1 (425) 555-0100', '+14255550100'], ['tel:+44.20.7946.0958;ext=12', '+442079460958'], ['+33612345678', '+33612345678']])('%s → %s', (raw, want) => {
    expect(e164(raw)).toBe(want);
  });
  it.each(['555-0100', 'tel:555-0100;phone-context=example.com', 'call me', '+0123'])('refuses %s with 400 invalidValue', (raw) => {
    expect(scimTypeOf(() => e164(raw))).toBe('400 invalidValue');
  });
});

describe('PATCH on a user (RFC 7644 §3.5.2)', () => {
  const ada: UserModel = {
    userName: 'ada', externalId: 'x1', givenName: 'Ada', familyName: 'Lovelace', displayName: null,
    emails: [{ value: 'ada@work.example', type: 'work', primary: true }], phoneNumbers: [], active: true,
  };
  const op = (o: string, path: string | null, value?: unknown) => ({ op: o, path, value });

  it('replace through a value path changes the matched element only', () => {
    const m = patchModel(ada, [op('replace', 'emails[type eq "work"].value', 'ada@new.example')]);
    expect(m.emails).toEqual([{ value: 'ada@new.example', type: 'work', primary: true }]);
  });
  it('replace through a filter that matches nothing → 400 noTarget (the login email is not touched)', () => {
    expect(scimTypeOf(() => patchModel(ada, [op('replace', 'emails[type eq "home"].value', 'eve@evil.example')]))).toBe('400 noTarget');
    expect(scimTypeOf(() => patchModel(ada, [op('remove', 'emails[value eq "nobody@x"]')]))).toBe('400 noTarget');
  });
  it('add through a filter that matches nothing creates the element the filter describes', () => {
    expect(patchModel(ada, [op('add', 'emails[type eq "home"].value', 'ada@home.example')]).emails).toEqual([
      { value: 'ada@work.example', type: 'work', primary: true }, { value: 'ada@home.example', type: 'home', primary: false },
    ]);
  });
  it('remove through a filter drops the matched elements', () => {
    expect(patchModel(ada, [op('remove', 'emails[type eq "WORK"]')]).emails).toEqual([]);
  });
  it("takes Entra ID's and Okta's shapes: string booleans, dotted and URN keys in a no-path value", () => {
    const m = patchModel(ada, [
      op('replace', 'active', 'False'),
      op('replace', null, { 'name.givenName': 'Augusta', 'urn:ietf:params:scim:schemas:core:2.0:User:displayName': 'A. King', active: 'True' }),
      op('add', 'phoneNumbers[type eq "work"].value', 'tel:+1-201-555-0123'),
    ]);
    expect(m).toMatchObject({ givenName: 'Augusta', displayName: 'A. King', active: true, phoneNumbers: [{ value: '+12015550123', type: 'work', primary: false }] });
  });
  it('an attribute the server does not keep → invalidPath; a read-only one → mutability', () => {
    expect(scimTypeOf(() => patchModel(ada, [op('replace', 'title', 'x')]))).toBe('400 invalidPath');
    expect(scimTypeOf(() => patchModel(ada, [op('replace', null, { nickName: 'x' })]))).toBe('400 invalidPath');
    expect(scimTypeOf(() => patchModel(ada, [op('replace', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber', '1')]))).toBe('400 invalidPath');
    expect(scimTypeOf(() => patchModel(ada, [op('replace', 'id', 'x')]))).toBe('400 mutability');
    expect(scimTypeOf(() => patchModel(ada, [op('replace', 'meta.created', 'x')]))).toBe('400 mutability');
    expect(scimTypeOf(() => patchModel(ada, [op('remove', 'userName')]))).toBe('400 invalidValue');
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

describe('SCIM events and audit rows go to the store with the row they describe (orgs outbox)', () => {
  it('a create hands user.provisioned and the scim.user_provisioned audit row to the same put', async () => {
    const endpoints = new Map<string, ScimEndpointRecord>();
    const puts: Array<{ userName: string | null; events: readonly ScimOutboxEvent[] }> = [];
    const account = { id: '6f1c7a3e-0000-4000-8000-0000000000aa', email: 'ada@example.com', created_at: 1, updated_at: 1 };
    const d: ScimDeps = {
      store: {
        endpoints: {
          byOrg: async () => null, byId: async (id) => endpoints.get(id) ?? null,
          insert: async (e) => { endpoints.set(e.id, e); return true; }, update: async () => undefined, delete: async () => true,
        },
        users: {
          get: async () => null, byExternalId: async () => null, byUserName: async () => null, delete: async () => true, forget: async () => undefined, unprojected: async () => [], membersAmong: async () => new Set<string>(),
          search: async () => ({ total: 0, rows: [] }), put: async (u, _v, events = []) => { puts.push({ userName: u.userName, events }); return true; },
        },
        groups: { get: async () => null, members: async () => new Map(), membersAmong: async () => new Set<string>(), byDisplayName: async () => null, byExternalId: async () => null, holding: async () => [], list: async () => [], search: async () => ({ total: 0, rows: [] }), insert: async () => true, update: async () => 'updated' as const, delete: async () => true },
      },
      orgs: { status: async () => 'enabled', isMember: async () => false, addMember: async () => undefined, removeMember: async () => undefined },
      authn: {
        ProvisionUser: async () => ({ user: account as never, created: true }), FindUsers: async () => ({ users: [] }),
        UpdateProvisionedUser: async () => account as never, SetUserActive: async () => ({ user: account as never, changed: false }),
      } as unknown as ScimDeps['authn'],
      authz: null,
      tokenKey: 'k'.repeat(32), baseUrl: 'https://id.example.com', now: () => 1_700_000_000,
    };
    const { token } = await createEndpoint(d, '6f1c7a3e-0000-4000-8000-000000000003');
    const r = await handleScim(d, createCallContext(), { method: 'POST', path: '/Users', query: '', body: '{"userName":"Ada"}', authorization: `Bearer ${token}` }, () => undefined);
    expect(r.status).toBe(201);
    expect(puts.map((p) => [p.userName, p.events.map((e) => e.name)])).toEqual([['Ada', ['user.provisioned', 'audit.recorded']]]);
    expect(puts[0]!.events[1]!.data).toMatchObject({ action: 'scim.user_provisioned', actor_type: 'service_account', resource_type: 'user', resource_id: account.id });
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
      users: { get: async () => null, byExternalId: async () => null, byUserName: async () => null, put: async () => true, delete: async () => true, forget: async () => undefined, unprojected: async () => [], membersAmong: async () => new Set<string>(), search: async () => ({ total: 0, rows: [] }) },
      groups: { get: async () => null, members: async () => new Map(), membersAmong: async () => new Set<string>(), byDisplayName: async () => null, byExternalId: async () => null, holding: async () => [], list: async () => [], search: async () => ({ total: 0, rows: [] }), insert: async () => true, update: async () => 'updated' as const, delete: async () => true },
    },
    orgs: { status: async () => 'enabled', isMember: async () => false, addMember: async () => undefined, removeMember: async () => undefined },
    authn: null, authz, tokenKey: 'k'.repeat(32), baseUrl: 'https://id.example.com', now: () => 1_700_000_000,
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
