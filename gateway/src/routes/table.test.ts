import { describe, it, expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { loadProtos } from '../../../scripts/generate-subgraphs.ts';
import { ROUTES, buildOpenApi, createRouteMatcher, matchRoute, rpcNameOf } from './table.ts';

/**
 * Every REST route the protos declare, read from proto/ on its own (not through the route table):
 * `<METHOD> <path> <service>.<Rpc>` for each RPC with a `(gatehouse.common.v1.rest)` option, the
 * service being its package's (`gatehouse.authn.v1` → `authn`).
 */
function protoRoutes(): string[] {
  const root = loadProtos();
  const out: string[] = [];
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service) {
        for (const m of child.methodsArray) {
          const rest = m.options?.['(gatehouse.common.v1.rest)'] as string | undefined;
          if (rest) out.push(`${rest} ${child.fullName.split('.')[2]}.${m.name}`);
        }
      } else if (child instanceof protobuf.Namespace) walk(child);
    }
  };
  walk(root);
  return out.sort();
}

/**
 * The routes served when this test was written (`<METHOD> <path> <service>.<Rpc>`): the spec's 109
 * /v1 routes, the two discovery documents and the email link target, plus the 11 added by issues
 * 31–35. A fixed anchor: a route lost from the protos fails here even though the table and the protos
 * agree. Adding an RPC does not touch it; removing a route on purpose is a deliberate edit of it.
 */
const BASELINE = readFileSync(new URL('./routes.baseline.txt', import.meta.url), 'utf8').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));

describe('REST route table (ARCHITECTURE §3, spec §4)', () => {
  const served = ROUTES.map((r) => `${r.method} ${r.path} ${r.service}.${r.rpc}`).sort();

  it('is exactly the routes the protos declare: one per RPC with a (gatehouse.common.v1.rest) option', () => {
    expect(served).toEqual(protoRoutes());
  });

  it('keeps every route of the baseline (123: the spec\'s 112 and the 11 of issues 31–35)', () => {
    expect(BASELINE).toHaveLength(112 + 11);
    expect(BASELINE.filter((r) => !served.includes(r))).toEqual([]);
    expect(ROUTES.find((r) => r.path === '/v1/admin/fga/models')).toMatchObject({ method: 'POST', rpc: 'ReadModels', service: 'authz', auth: 'admin' });
  });

  it('derives RPC names from the GraphQL field', () => {
    expect(rpcNameOf('validate_jwt_token')).toBe('ValidateJwtToken');
    expect(rpcNameOf('_users')).toBe('Users');
    expect(rpcNameOf('_fga_write_model')).toBe('WriteModel');
    expect(rpcNameOf('check_permissions')).toBe('CheckPermissions');
  });

  it('maps spec routes to their owning service, RPC and auth class', () => {
    const get = (method: string, path: string) => {
      const m = matchRoute(method, path);
      if (!('route' in m)) throw new Error(`${method} ${path} not in the table`);
      return m.route;
    };
    expect(get('POST', '/v1/signup')).toMatchObject({ service: 'authn', rpc: 'Signup', auth: 'public' });
    expect(get('GET', '/v1/profile')).toMatchObject({ service: 'authn', rpc: 'Profile', auth: 'user' });
    expect(get('POST', '/v1/verify_otp')).toMatchObject({ service: 'authn', rpc: 'VerifyOtp', auth: 'mfa' });
    expect(get('POST', '/v1/webauthn_login_verify')).toMatchObject({ service: 'authn', auth: 'public' });
    expect(get('POST', '/v1/resend_otp')).toMatchObject({ service: 'mfa', rpc: 'ResendOtp', auth: 'mfa' });
    expect(get('POST', '/v1/email_otp_mfa_setup')).toMatchObject({ service: 'authn', auth: 'user_or_mfa' });
    expect(get('POST', '/v1/lock_mfa')).toMatchObject({ service: 'authn', rpc: 'LockMfa', auth: 'mfa' });
    expect(get('POST', '/v1/check_permissions')).toMatchObject({ service: 'authz', rpc: 'CheckPermissions', auth: 'permissions' });
    expect(get('POST', '/v1/admin/login')).toMatchObject({ service: 'admin', rpc: 'AdminLogin', auth: 'public' });
    expect(get('GET', '/v1/admin/session')).toMatchObject({ service: 'admin', rpc: 'AdminSession', auth: 'admin' });
    expect(get('POST', '/v1/admin/users')).toMatchObject({ service: 'authn', rpc: 'Users', auth: 'admin' });
    expect(get('GET', '/v1/admin/fga/model')).toMatchObject({ service: 'authz', rpc: 'GetModel' });
    expect(get('POST', '/v1/admin/fga/model')).toMatchObject({ service: 'authz', rpc: 'WriteModel' });
    expect(get('POST', '/v1/admin/fga/tuples/delete')).toMatchObject({ service: 'authz', rpc: 'DeleteTuples' });
    expect(get('POST', '/v1/admin/saml_idp_keys')).toMatchObject({ service: 'orgs', rpc: 'ListSamlIdpKeys', auth: 'org_admin' });
    expect(get('POST', '/v1/admin/create_scim_endpoint')).toMatchObject({ service: 'orgs', rpc: 'CreateScimEndpoint', auth: 'org_admin' });
    expect(get('POST', '/v1/admin/create_organization')).toMatchObject({ service: 'orgs', auth: 'admin' });
    expect(get('POST', '/v1/admin/import_saml_sp_metadata')).toMatchObject({ service: 'orgs', auth: 'admin' });
    expect(get('GET', '/.well-known/jwks.json')).toMatchObject({ service: 'authn', rpc: 'GetJwks' });
    expect(get('GET', '/.well-known/openid-configuration')).toMatchObject({ rpc: 'GetOpenidConfiguration' });
    expect(get('GET', '/verify_email')).toMatchObject({ service: 'authn', rpc: 'VerifyEmailLink', auth: 'public' });
    expect(get('HEAD', '/v1/meta').rpc).toBe('Meta');
  });

  it('has unique operation ids', () => {
    const ids = ROUTES.map((r) => `${r.service}.${r.rpc}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('tells not_found from method_not_allowed', () => {
    expect(matchRoute('GET', '/v1/nope')).toEqual({ error: 'not_found' });
    expect(matchRoute('GET', '/v1/signup/')).toEqual({ error: 'not_found' });
    expect(matchRoute('GET', '/v1/login')).toEqual({ error: 'method_not_allowed', allow: ['POST'] });
    expect(matchRoute('PUT', '/v1/admin/fga/model')).toEqual({ error: 'method_not_allowed', allow: ['GET', 'POST'] });
  });

  it('refuses a table with a duplicate route', () => {
    const dup = ROUTES[0]!;
    expect(() => createRouteMatcher([dup, dup])).toThrow(`duplicate route ${dup.method} ${dup.path}`);
  });
});

describe('buildOpenApi', () => {
  const doc = buildOpenApi(ROUTES, { version: '2.3.0', serverUrl: 'https://auth.example.com' }) as any;

  it('is an OpenAPI 3.1 document with the server and version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.3.0');
    expect(doc.servers).toEqual([{ url: 'https://auth.example.com' }]);
  });

  it('lists every route with operationId <service>.<Rpc> and its summary', () => {
    for (const r of ROUTES) {
      const op = doc.paths[r.path][r.method.toLowerCase()];
      expect(op.operationId).toBe(`${r.service}.${r.rpc}`);
      expect(op.summary).toBe(r.summary);
    }
    expect(Object.keys(doc.paths['/v1/admin/fga/model']).sort()).toEqual(['get', 'post']);
  });

  it('documents security per auth class', () => {
    expect(doc.paths['/v1/signup'].post.security).toEqual([]);
    expect(doc.paths['/v1/profile'].get.security).toContainEqual({ bearerAuth: [] });
    expect(doc.paths['/v1/verify_otp'].post.security).toEqual([{ mfaCookie: [] }]);
    expect(doc.paths['/v1/admin/users'].post.security).toEqual([{ adminCookie: [] }, { adminSecret: [] }]);
    expect(doc.paths['/v1/admin/org_members'].post.security).toEqual(expect.arrayContaining([{ adminSecret: [] }, { bearerAuth: [] }]));
    expect(doc.components.securitySchemes.adminSecret).toEqual({ type: 'apiKey', in: 'header', name: 'x-service-admin-secret' });
  });

  it('documents the {code, message} error responses', () => {
    expect(doc.components.schemas.Error.required).toEqual(['code', 'message']);
    const responses = doc.paths['/v1/profile'].get.responses;
    for (const s of ['200', '400', '401', '403', '404', '405', '409', '429', '500']) expect(responses[s]).toBeDefined();
    expect(doc.paths['/v1/signup'].post.responses['401']).toBeUndefined();
    expect(doc.components.responses.Error429.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('serialises to JSON', () => {
    expect(() => JSON.parse(JSON.stringify(doc))).not.toThrow();
  });
});
