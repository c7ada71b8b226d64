/**
 * @module gateway/routes/contract.test
 * The contract between the REST route table and the protos (issue 14): every route calls an RPC
 * that exists, and each RPC declares its auth class once, as the `(gatehouse.common.v1.auth)` method
 * option, which the table's `auth` equals.
 */
import { describe, expect, it } from '@jest/globals';
import { INTERNAL_API_NAMES, PUBLIC_API_NAMES } from '@gatehouse/contracts/service-names';
import { serviceDescriptor, servicesWithProto, type DescriptorName, type ServiceDescriptor } from '@gatehouse/rpc';
import { OAUTH_ROUTES } from '../oauth.ts';
import { SOCIAL_ROUTES } from '../login-redirect.ts';
import { ROUTES } from './table.ts';

const AUTH_OPTION = '(gatehouse.common.v1.auth)';

/** Every loaded descriptor: the public services and their internal APIs (from services/registry.ts). */
const DESCRIPTORS: ServiceDescriptor[] = [...PUBLIC_API_NAMES, ...INTERNAL_API_NAMES].map((s: DescriptorName) => serviceDescriptor(s));

/**
 * The auth class an RPC declares, as protobufjs (keepCase) exposes it: `method.options` holds the
 * option under its parenthesised full name, with the enum value's name (`AUTH_CLASS_ORG_ADMIN`);
 * returned lower-cased without the prefix (`org_admin`), the route table's spelling.
 */
function authOf(desc: ServiceDescriptor, rpc: string): string | undefined {
  const codec = desc.methods.get(rpc);
  if (!codec) return undefined;
  const method = codec.requestType.root.lookupService(desc.fullName).methods[rpc];
  const value: unknown = method?.options?.[AUTH_OPTION];
  return typeof value === 'string' ? value.replace(/^AUTH_CLASS_/, '').toLowerCase() : undefined;
}

describe('auth classes are declared once, in the proto (issue 14)', () => {
  it('every RPC of every service carries a (gatehouse.common.v1.auth) option other than UNSPECIFIED', () => {
    const missing = DESCRIPTORS.flatMap((d) => [...d.methods.keys()].filter((rpc) => {
      const auth = authOf(d, rpc);
      return auth === undefined || auth === 'unspecified';
    }).map((rpc) => `${d.fullName}/${rpc}`));
    expect(missing).toEqual([]);
  });

  it('the internal APIs are AUTH_CLASS_INTERNAL and nothing else is', () => {
    for (const d of DESCRIPTORS) {
      for (const rpc of d.methods.keys()) expect([d.service, rpc, authOf(d, rpc) === 'internal']).toEqual([d.service, rpc, d.service.endsWith('.internal')]);
    }
  });

  it("each route's auth in the table equals its RPC's option", () => {
    expect(ROUTES.map((r) => [r.method, r.path, authOf(serviceDescriptor(r.service), r.rpc)]))
      .toEqual(ROUTES.map((r) => [r.method, r.path, r.auth]));
  });
});

describe('every REST route has a real RPC (issue 14)', () => {
  it('every service of the route table has a proto', () => {
    expect([...new Set(ROUTES.map((r) => r.service))].filter((s) => !servicesWithProto().includes(s))).toEqual([]);
  });

  it("every route's RPC exists in its service's proto", () => {
    const missing = ROUTES.filter((r) => !serviceDescriptor(r.service).methods.has(r.rpc)).map((r) => `${r.method} ${r.path} -> ${r.service}.${r.rpc}`);
    expect(missing).toEqual([]);
  });

  it('every public RPC is routed, except authz DeleteUserTuples (called by authn only), orgs ScimRequest (/scim/v2/*, gateway/src/scim.ts), orgs SamlIdpRequest (/oauth/saml/<org>/idp/*, gateway/src/saml-idp.ts) and orgs SsoRequest (gateway/src/sso.ts); the OAuth endpoints by gateway/src/oauth.ts, social login by gateway/src/login-redirect.ts', () => {
    const routed = new Set([...ROUTES.map((r) => `${r.service}.${r.rpc}`), ...OAUTH_ROUTES.map((r) => `authn.${r.rpc}`), ...SOCIAL_ROUTES.map((r) => `authn.${r.rpc}`)]);
    const unrouted = servicesWithProto().flatMap((s) => [...serviceDescriptor(s).methods.keys()].map((rpc) => `${s}.${rpc}`)).filter((id) => !routed.has(id));
    expect(unrouted).toEqual(['orgs.ScimRequest', 'orgs.SamlIdpRequest', 'orgs.SsoRequest', 'authz.DeleteUserTuples']);
  });
});
