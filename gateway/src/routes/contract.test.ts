/**
 * @module gateway/routes/contract.test
 * The contract between the REST route table and the protos (issue 14): each RPC declares its auth
 * class once, as the `(gatehouse.common.v1.auth)` method option, and the table agrees with it.
 */
import { describe, expect, it } from '@jest/globals';
import { serviceDescriptor, servicesWithProto, type DescriptorName, type ServiceDescriptor } from '@gatehouse/rpc';
import { ROUTES } from './table.ts';

const AUTH_OPTION = '(gatehouse.common.v1.auth)';

/** Every loaded descriptor: the public services and their internal APIs. */
const DESCRIPTORS: ServiceDescriptor[] = servicesWithProto().flatMap((s): DescriptorName[] =>
  s === 'authn' || s === 'mfa' ? [s, `${s}.internal`] : [s]).map((s) => serviceDescriptor(s));

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
    const routed = ROUTES.filter((r) => servicesWithProto().includes(r.service) && serviceDescriptor(r.service).methods.has(r.rpc));
    expect(routed.length).toBeGreaterThan(0);
    expect(routed.map((r) => [r.path, r.method, authOf(serviceDescriptor(r.service), r.rpc)]))
      .toEqual(routed.map((r) => [r.path, r.method, r.auth]));
  });
});
