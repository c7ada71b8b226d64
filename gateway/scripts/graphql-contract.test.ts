/**
 * @module gateway/scripts/graphql-contract.test
 * The contract between the GraphQL API and the protos (issue 14; spec §1: each REST endpoint maps to
 * one GraphQL operation with the same request and response fields). Every root field of the composed
 * API schema is bound to an RPC of its subgraph's service (or is one of graphql.md §1.3's fixed
 * errors); the field's input (its `params`/`param` input type, or its top-level arguments) has
 * exactly the fields of the RPC's request message; its output type has exactly the fields of the
 * response message, recursively, with the same list-ness and scalar kinds.
 *
 * Outputs are compared for equality, not as a subset: the codec fills the proto response to its full
 * shape and that object *is* the REST body and the gRPC reply (behaviour.md §0.1), so a proto field
 * GraphQL lacks would show on two surfaces only, and a GraphQL field the proto lacks would always be
 * null. The one exception is an alias that a subgraph resolves from another field ({@link ALIASES}).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  Kind, buildSchema, getNamedType, isInputObjectType, isListType, isNonNullType, isObjectType,
  type GraphQLField, type GraphQLInputType, type GraphQLNamedType, type GraphQLOutputType, type GraphQLSchema,
} from 'graphql';
import federationInternals from '@apollo/federation-internals';
import type protobuf from 'protobufjs';
import { serviceDescriptor, type FieldBinding, type ServiceName } from '@gatehouse/rpc';
import { ROUTES } from '../src/routes/table.ts';
import { readSupergraph } from '../src/graphql/supergraph.ts';
import { SUBGRAPH_SDLS } from './compose.ts';
import { gqlOption, loadProtos, subgraphServices } from '../../scripts/generate-subgraphs.ts';
import { adminBindings, adminFixedErrors } from '../../services/admin/src/graphql/resolvers.ts';
import { authnBindings, authnFixedErrors } from '../../services/authn/src/graphql/resolvers.ts';
import { authzBindings } from '../../services/authz/src/graphql/resolvers.ts';
import { mfaBindings } from '../../services/mfa/src/graphql/resolvers.ts';
import { orgsBindings } from '../../services/orgs/src/graphql/resolvers.ts';

type Op = 'Query' | 'Mutation';
type Bindings = Partial<Record<Op, Record<string, FieldBinding>>>;

/** Each service's field → RPC bindings, and its operations that always fail (graphql.md §1.3). */
const SERVICES: Record<ServiceName, { bindings: Bindings; fixed: Partial<Record<Op, Record<string, unknown>>> }> = {
  authn: { bindings: authnBindings, fixed: authnFixedErrors },
  mfa: { bindings: mfaBindings, fixed: {} },
  admin: { bindings: adminBindings, fixed: adminFixedErrors },
  orgs: { bindings: orgsBindings, fixed: {} },
  authz: { bindings: authzBindings, fixed: {} },
};
const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];
const OPS: Op[] = ['Query', 'Mutation'];

/** GraphQL output fields resolved from another field of the same proto message (graphql.md D10). */
const ALIASES: Record<string, Record<string, string>> = { InviteMembersResponse: { Users: 'users' } };

/**
 * Additive proto fields that graphql.md does not have (issue 18: a client's redirect URIs and grant
 * types), served on REST and gRPC only: the GraphQL schema stays exactly the spec's (compose.test.ts).
 */
const REST_GRPC_ONLY: Record<string, readonly string[]> = {
  'gatehouse.admin.v1.CreateClientRequest': ['redirect_uris', 'grant_types', 'is_public', 'post_logout_redirect_uris', 'is_first_party', 'backchannel_logout_uri', 'backchannel_logout_session_required', 'frontchannel_logout_uri', 'frontchannel_logout_session_required', 'require_pushed_authorization_requests'],
  'gatehouse.admin.v1.UpdateClientRequest': ['redirect_uris', 'grant_types', 'post_logout_redirect_uris', 'is_first_party', 'backchannel_logout_uri', 'backchannel_logout_session_required', 'frontchannel_logout_uri', 'frontchannel_logout_session_required', 'require_pushed_authorization_requests', 'clear_post_logout_redirect_uris'],
  'gatehouse.admin.v1.Client': ['redirect_uris', 'grant_types', 'is_public', 'post_logout_redirect_uris', 'is_first_party', 'backchannel_logout_uri', 'backchannel_logout_session_required', 'frontchannel_logout_uri', 'frontchannel_logout_session_required', 'require_pushed_authorization_requests'],
  // issue 34 §4: RFC 9449 §7.1, a resource server passes the DPoP proof it received
  'gatehouse.authn.v1.ValidateJWTTokenRequest': ['dpop_proof', 'dpop_method', 'dpop_url'],
  // issue 31 §1: the AuthnRequest binding and the IdP's Single Logout endpoint of an org SAML connection
  'gatehouse.orgs.v1.CreateOrgSAMLConnectionRequest': ['idp_sso_binding', 'idp_slo_url'],
  'gatehouse.orgs.v1.UpdateOrgSAMLConnectionRequest': ['idp_sso_binding', 'idp_slo_url'],
  'gatehouse.orgs.v1.OrgSAMLConnection': ['idp_sso_binding', 'idp_slo_url'],
};

/**
 * Every GraphQL root field the protos declare, read from proto/ on its own: `<Query|Mutation>.<field>`
 * of each RPC with a `(gatehouse.common.v1.graphql)` option, whether it is a fixed error
 * (`graphql_error`) and whether the RPC also has a REST route.
 */
const PROTO_FIELDS = (() => {
  const root = loadProtos();
  return subgraphServices(root).flatMap((s) => s.services.flatMap((name) => root.lookupService(name).methodsArray)).filter((m) => gqlOption(m, 'graphql') !== undefined).map((m) => ({
    key: `${gqlOption(m, 'graphql_query') === true ? 'Query' : 'Mutation'}.${String(gqlOption(m, 'graphql'))}`,
    fixed: gqlOption(m, 'graphql_error') !== undefined,
    rest: gqlOption(m, 'rest') !== undefined,
  }));
})();

/**
 * The root fields of api-schema.graphql, the API schema as it stood when this test was written
 * (graphql.md's 115 and the 9 added by issues 33–35): a fixed anchor, so a field lost from the protos
 * fails although the protos and the supergraph agree. Adding an RPC does not touch it.
 */
const BASELINE_FIELDS = (() => {
  const s = buildSchema(readFileSync(new URL('./api-schema.graphql', import.meta.url), 'utf8'));
  return [...Object.keys(s.getQueryType()!.getFields()).map((f) => `Query.${f}`), ...Object.keys(s.getMutationType()!.getFields()).map((f) => `Mutation.${f}`)];
})();

const api: GraphQLSchema = federationInternals.Supergraph.build(readSupergraph()).apiSchema().toGraphQLJSSchema();
const rootOf = (op: Op) => (op === 'Query' ? api.getQueryType()! : api.getMutationType()!);

/** Every bound root field: its service, operation, GraphQL field and RPC. */
const BOUND = SERVICE_NAMES.flatMap((service) => OPS.flatMap((op) => Object.entries(SERVICES[service].bindings[op] ?? {}).map(([field, binding]) => ({
  service, op, field, binding, gql: rootOf(op).getFields()[field], method: methodOf(service, binding.rpc),
}))));

function methodOf(service: ServiceName, rpc: string): { request: protobuf.Type; response: protobuf.Type } | undefined {
  const codec = serviceDescriptor(service).methods.get(rpc);
  return codec && { request: codec.requestType, response: codec.responseType };
}

/** The root fields a subgraph's SDL declares, by operation. */
function sdlRootFields(service: ServiceName, op: Op): string[] {
  return SUBGRAPH_SDLS[service]!.definitions.flatMap((d) =>
    d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === op ? (d.fields ?? []).map((f) => f.name.value) : []);
}

/** A proto field's kind in GraphQL terms: `Int64`, `String`, `Boolean`, `Map` or `message:<full name>`. */
function protoKind(field: protobuf.Field): string {
  field.resolve();
  const rt = field.resolvedType;
  if (rt && 'fieldsArray' in rt) return rt.fullName === '.google.protobuf.Struct' ? 'Map' : `message:${rt.fullName.slice(1)}`;
  return ({ int64: 'Int64', string: 'String', bool: 'Boolean' } as Record<string, string>)[field.type] ?? `proto:${field.type}`;
}

/** A GraphQL type's kind in the same terms (`ID` is a string on the wire). */
function graphqlKind(type: GraphQLNamedType): string {
  if (isObjectType(type) || isInputObjectType(type)) return 'message';
  return type.name === 'ID' ? 'String' : type.name;
}

/** `[T!]!` → list; a nullable named type → nullable. */
function shapeOfType(type: GraphQLInputType | GraphQLOutputType): { list: boolean; nullable: boolean; named: GraphQLNamedType } {
  const inner = isNonNullType(type) ? type.ofType : type;
  return { list: isListType(inner), nullable: !isNonNullType(type), named: getNamedType(type) };
}

/** A proto3 `optional` field (protobufjs: a synthetic oneof `_<name>`). */
const isOptional = (f: protobuf.Field): boolean => f.partOf?.name === `_${f.name}`;

interface GqlField {
  name: string;
  type: GraphQLInputType | GraphQLOutputType;
}

/**
 * Compares GraphQL fields with a proto message, recursing into message-typed fields once per
 * (GraphQL type, message) pair, and returns the differences as readable lines (empty when equal).
 * `input`: nullable GraphQL scalars must be proto3 `optional` (graphql.md null = "not supplied",
 * behaviour.md §0.1).
 */
function compare(where: string, fields: readonly GqlField[], message: protobuf.Type, input: boolean, seen = new Set<string>(), gqlType = ''): string[] {
  const key = `${gqlType || where}→${message.fullName}`;
  if (seen.has(key)) return [];
  seen.add(key);
  const out: string[] = [];
  const aliases = ALIASES[gqlType] ?? {};
  const proto = new Map(message.fieldsArray.map((f) => [f.name, f]));
  const gql = new Map(fields.filter((f) => !(f.name in aliases)).map((f) => [f.name, f]));
  for (const name of gql.keys()) if (!proto.has(name)) out.push(`${where}.${name}: in GraphQL, not in ${message.fullName.slice(1)}`);
  const restOnly = REST_GRPC_ONLY[message.fullName.slice(1)] ?? [];
  for (const name of proto.keys()) if (!gql.has(name) && !restOnly.includes(name)) out.push(`${where}.${name}: in ${message.fullName.slice(1)}, not in GraphQL`);
  for (const [alias, of] of Object.entries(aliases)) if (!proto.has(of)) out.push(`${where}.${alias}: alias of a missing field ${of}`);
  for (const [name, g] of gql) {
    const p = proto.get(name);
    if (!p) continue;
    const { list, nullable, named } = shapeOfType(g.type);
    const at = `${where}.${name}`;
    if (list !== p.repeated) out.push(`${at}: ${list ? 'a list' : 'not a list'} in GraphQL, ${p.repeated ? 'repeated' : 'not repeated'} in the proto`);
    const want = graphqlKind(named);
    const have = protoKind(p);
    if (want === 'message' && have.startsWith('message:')) {
      const sub = 'getFields' in named ? Object.values((named as { getFields(): Record<string, GqlField> }).getFields()) : [];
      out.push(...compare(`${named.name}`, sub, p.resolvedType as protobuf.Type, input, seen, named.name));
    } else if (want !== have) {
      out.push(`${at}: ${String(g.type)} in GraphQL, ${p.type} in the proto`);
    }
    if (input && nullable && !list && want !== 'message' && !isOptional(p)) out.push(`${at}: nullable in GraphQL, not optional in the proto`);
  }
  return out;
}

/** The request side of a bound field: its input object's fields, or its top-level arguments. */
function inputFields(gql: GraphQLField<unknown, unknown>, binding: FieldBinding): GqlField[] {
  if (binding.arg === null) return [];
  if (binding.arg === '*') return gql.args.map((a) => ({ name: a.name, type: a.type }));
  const arg = gql.args.find((a) => a.name === binding.arg);
  const named = arg && getNamedType(arg.type);
  return named && isInputObjectType(named) ? Object.values(named.getFields()).map((f) => ({ name: f.name, type: f.type })) : [];
}

describe('every GraphQL root field is bound to an RPC of its subgraph (graphql.md §2, §5.1)', () => {
  it('the root fields of the API schema are those the protos declare, the bound fields plus the fixed-error operations, each in one service, and keep the baseline\'s', () => {
    const owners = new Map<string, string[]>();
    for (const service of SERVICE_NAMES) {
      for (const op of OPS) {
        for (const field of [...Object.keys(SERVICES[service].bindings[op] ?? {}), ...Object.keys(SERVICES[service].fixed[op] ?? {})]) {
          owners.set(`${op}.${field}`, [...(owners.get(`${op}.${field}`) ?? []), service]);
        }
      }
    }
    const all = OPS.flatMap((op) => Object.keys(rootOf(op).getFields()).map((f) => `${op}.${f}`));
    expect([...all].sort()).toEqual(PROTO_FIELDS.map((f) => f.key).sort());
    expect(BASELINE_FIELDS).toHaveLength(115 + 9);
    expect(BASELINE_FIELDS.filter((f) => !all.includes(f))).toEqual([]);
    expect([...owners.keys()].sort()).toEqual(all.sort());
    expect([...owners].filter(([, s]) => s.length !== 1)).toEqual([]);
    expect(BOUND.map((b) => `${b.op}.${b.field}`).sort()).toEqual(PROTO_FIELDS.filter((f) => !f.fixed).map((f) => f.key).sort());
  });

  it("each service's subgraph SDL declares exactly its bound and fixed-error fields", () => {
    for (const service of SERVICE_NAMES) {
      for (const op of OPS) {
        const declared = sdlRootFields(service, op).sort();
        const owned = [...Object.keys(SERVICES[service].bindings[op] ?? {}), ...Object.keys(SERVICES[service].fixed[op] ?? {})].sort();
        expect({ service, op, fields: declared }).toEqual({ service, op, fields: owned });
      }
    }
  });

  it("every binding's RPC exists in its service's proto", () => {
    expect(BOUND.filter((b) => !b.method).map((b) => `${b.field} -> ${b.service}.${b.binding.rpc}`)).toEqual([]);
  });

  it('each REST route is the same operation as its GraphQL field: same service, same RPC (spec §1)', () => {
    const byField = new Map(BOUND.map((b) => [b.field, b]));
    const routed = ROUTES.filter((r) => r.graphqlField !== undefined);
    expect(routed).toHaveLength(PROTO_FIELDS.filter((f) => f.rest && !f.fixed).length);
    expect(routed.map((r) => [r.graphqlField, byField.get(r.graphqlField!)?.service, byField.get(r.graphqlField!)?.binding.rpc]))
      .toEqual(routed.map((r) => [r.graphqlField, r.service, r.rpc]));
  });

  it('arguments follow graphql.md §2: `params`, `param` on _revoke_access/_enable_access, top-level on the three WebAuthn fields, none on the argument-less fields', () => {
    const TOP_LEVEL = ['webauthn_registration_options', 'webauthn_login_options', 'webauthn_delete_credential'];
    const PARAM = ['_revoke_access', '_enable_access'];
    for (const { field, binding, gql } of BOUND) {
      const args = gql!.args.map((a) => a.name);
      const want = args.length === 0 ? null : TOP_LEVEL.includes(field) ? '*' : PARAM.includes(field) ? 'param' : 'params';
      expect({ field, arg: binding.arg, args }).toEqual({ field, arg: want, args: want === '*' ? args : want === null ? [] : [want] });
    }
  });
});

describe('GraphQL inputs and outputs are the proto messages (issue 14)', () => {
  it("each field's input has exactly the fields of its RPC's request message, with the same lists, scalar kinds and optionality", () => {
    const diffs = BOUND.flatMap(({ field, binding, gql, method }) => compare(`${field}(input)`, inputFields(gql!, binding), method!.request, true));
    expect([...new Set(diffs)]).toEqual([]);
  });

  it("each field's output type has exactly the fields of its RPC's response message (bare lists: the one wrapped field)", () => {
    const diffs = BOUND.flatMap(({ field, binding, gql, method }) => {
      const { list, named } = shapeOfType(gql!.type);
      if (binding.unwrap) {
        // a bare GraphQL list is the response message's only field (graphql.md D7)
        const only = method!.response.fieldsArray;
        if (only.length !== 1 || only[0]!.name !== binding.unwrap) return [`${field}: ${method!.response.name} must hold only ${binding.unwrap}`];
        return compare(field, [{ name: binding.unwrap, type: gql!.type }], method!.response, false);
      }
      if (list || !('getFields' in named)) return [`${field}: a ${String(gql!.type)} result needs an unwrap binding`];
      const fields = Object.values((named as { getFields(): Record<string, GqlField> }).getFields());
      return compare(named.name, fields, method!.response, false, new Set(), named.name);
    });
    expect([...new Set(diffs)]).toEqual([]);
  });
});
