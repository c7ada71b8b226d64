/**
 * @module @gatehouse/rpc/graphql
 * What every service's Apollo Federation subgraph shares: the `Int64` and `Map` scalars
 * (graphql.md §1.4), a resolver builder whose resolvers call the same handlers as the gRPC
 * server through the same proto codec, and the AppError → `extensions.code` mapping (graphql.md §1.2).
 */
import { GraphQLError, GraphQLScalarType, Kind, parse, type DocumentNode, type FieldDefinitionNode, type GraphQLSchema, type TypeNode, type ValueNode } from 'graphql';
import { createRequire } from 'node:module';
import type * as ApolloSubgraph from '@apollo/subgraph';
import { SUBGRAPH_ALIASES, SUBGRAPH_FIXED_ERRORS, SUBGRAPH_SDL, type SubgraphKey } from '@gatehouse/contracts/subgraphs';
import { AppError, graphqlCodeOf, toAppError } from '@gatehouse/errors';
import type { CallContext, HandlerMap } from './context.ts';
import type { ServiceDescriptor } from './proto.ts';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function parseInt64(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= MAX_SAFE) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) {
    const n = Number(value.trim());
    if (Math.abs(n) <= MAX_SAFE) return n;
  }
  throw new GraphQLError('Int64 must be an integer (a number or a string of digits)', { extensions: { code: 'INVALID_ARGUMENT' } });
}

/** `Int64`: a JSON number on output; input takes an integer or a string of digits (graphql.md §1.4). */
export const Int64Scalar = new GraphQLScalarType({
  name: 'Int64',
  description: 'A 64-bit integer within ±2^53, serialised as a JSON number (Unix seconds, counts).',
  serialize: (v) => (typeof v === 'string' ? Number(v) : v),
  parseValue: parseInt64,
  parseLiteral(ast) {
    if (ast.kind === Kind.INT || ast.kind === Kind.STRING) return parseInt64(ast.value);
    throw new GraphQLError('Int64 must be an integer', { extensions: { code: 'INVALID_ARGUMENT' } });
  },
});

function literalToJson(ast: ValueNode, variables: Record<string, unknown> | null | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.ENUM:
      return ast.value;
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((v) => literalToJson(v, variables));
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literalToJson(f.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    default:
      return undefined;
  }
}

/** `Map`: a plain JSON object, never `{value: …}` (graphql.md §1.4, behaviour.md §0.1). */
export const MapScalar = new GraphQLScalarType({
  name: 'Map',
  description: 'A plain JSON object.',
  serialize: (v) => v,
  parseValue(v) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new GraphQLError('Map must be a JSON object', { extensions: { code: 'INVALID_ARGUMENT' } });
    }
    return v;
  },
  parseLiteral(ast, variables) {
    if (ast.kind !== Kind.OBJECT) throw new GraphQLError('Map must be a JSON object', { extensions: { code: 'INVALID_ARGUMENT' } });
    return literalToJson(ast, variables);
  },
});

/** The GraphQL context every subgraph resolver receives. */
export interface SubgraphContext {
  callContext: CallContext;
}

/** Converts anything thrown into a GraphQLError carrying the REST code upper-cased (graphql.md D2). */
export function toGraphqlError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError && err.extensions?.code) return err;
  const app = toAppError(err);
  return new GraphQLError(app.message, { extensions: { code: graphqlCodeOf(app.code) }, originalError: app });
}

/** How a root field maps to an RPC: `{ rpc, arg }` where `arg` is the argument holding the request. */
export interface FieldBinding {
  rpc: string;
  /** argument carrying the request object (`params`, `param`), or `'*'` when the arguments are top-level fields, or null when none */
  arg: string | null;
  /** for REST-wrapped bare lists, the response field to return as the GraphQL value */
  unwrap?: string;
}

/** The named type under a field's or argument's list and non-null wrappers. */
function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}

/**
 * The root-field bindings of a subgraph, from its proto: every RPC of `desc` whose
 * `(gatehouse.common.v1.graphql)` option names a root field of `typeDefs` is bound to it. The SDL says
 * the rest: Query or Mutation; the request is the field's one input-object argument (`params`), or its
 * arguments as top-level request fields (scalar arguments), or absent (no arguments); a field that
 * returns a list returns the response message's one field.
 * @throws Error when the option names a field the SDL does not declare under Query or Mutation, or a
 *   list field's response message has not exactly one field (contract bugs, found at start-up)
 */
export function protoBindings(desc: ServiceDescriptor, typeDefs: DocumentNode): { Query: Record<string, FieldBinding>; Mutation: Record<string, FieldBinding> } {
  const inputs = new Set<string>();
  const roots = new Map<string, { op: 'Query' | 'Mutation'; field: FieldDefinitionNode }>();
  for (const def of typeDefs.definitions) {
    if (def.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION || def.kind === Kind.INPUT_OBJECT_TYPE_EXTENSION) inputs.add(def.name.value);
    if ((def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.OBJECT_TYPE_EXTENSION) && (def.name.value === 'Query' || def.name.value === 'Mutation')) {
      for (const field of def.fields ?? []) roots.set(field.name.value, { op: def.name.value, field });
    }
  }
  const out: { Query: Record<string, FieldBinding>; Mutation: Record<string, FieldBinding> } = { Query: {}, Mutation: {} };
  for (const codec of desc.methods.values()) {
    if (!codec.graphqlField) continue;
    const root = roots.get(codec.graphqlField);
    if (!root) throw new Error(`${desc.fullName}.${codec.name}: its GraphQL field ${codec.graphqlField} is not a Query or Mutation field of the subgraph`);
    const args = root.field.arguments ?? [];
    const arg = args.length === 0 ? null : args.length === 1 && inputs.has(namedTypeOf(args[0]!.type)) ? args[0]!.name.value : '*';
    const binding: FieldBinding = { rpc: codec.name, arg };
    const returnType = root.field.type.kind === Kind.NON_NULL_TYPE ? root.field.type.type : root.field.type;
    if (returnType.kind === Kind.LIST_TYPE) {
      const fields = codec.responseType.fieldsArray;
      if (fields.length !== 1) throw new Error(`${desc.fullName}.${codec.name}: ${codec.graphqlField} returns a list, so its response needs exactly one field`);
      binding.unwrap = fields[0]!.name;
    }
    out[root.op][codec.graphqlField] = binding;
  }
  return out;
}

/**
 * Builds Query/Mutation resolvers that call `handlers` through the proto codec, exactly as gRPC does.
 * @param bindings root field name → binding, split by operation type
 */
export function bindResolvers(
  desc: ServiceDescriptor,
  handlers: HandlerMap,
  bindings: { Query?: Record<string, FieldBinding>; Mutation?: Record<string, FieldBinding> },
): Record<string, Record<string, (parent: unknown, args: Record<string, unknown>, ctx: SubgraphContext) => Promise<unknown>>> {
  const out: Record<string, Record<string, (parent: unknown, args: Record<string, unknown>, ctx: SubgraphContext) => Promise<unknown>>> = {};
  for (const op of ['Query', 'Mutation'] as const) {
    const fields = bindings[op];
    if (!fields) continue;
    out[op] = {};
    for (const [field, binding] of Object.entries(fields)) {
      out[op]![field] = async (_parent, args, ctx) => {
        try {
          const method = desc.methods.get(binding.rpc);
          const handler = handlers[binding.rpc];
          if (!method || !handler) throw new AppError('unimplemented', `${field} is not implemented yet`);
          const raw = binding.arg === null ? {} : binding.arg === '*' ? args : (args[binding.arg] ?? {});
          const res = method.normalizeResponse(await handler(method.normalizeRequest(raw), ctx.callContext));
          return binding.unwrap ? res[binding.unwrap] : res;
        } catch (e) {
          throw toGraphqlError(e);
        }
      };
    }
  }
  return out;
}

/** A resolver that always fails with a fixed error (deprecated operations, graphql.md §1.3). */
export function alwaysFails(code: AppError['code'], message: string): () => Promise<never> {
  return async () => { throw toGraphqlError(new AppError(code, message)); };
}

/** Builds a federation subgraph schema (array form, TOOLCHAIN.md) with the shared scalars. */
export function buildSubgraph(typeDefs: DocumentNode, resolvers: Record<string, unknown>): GraphQLSchema {
  // loaded here, not with this module: all-in-one builds its subgraphs with the first GraphQL request (issue 22 §3)
  const { buildSubgraphSchema } = createRequire(import.meta.url)('@apollo/subgraph') as typeof ApolloSubgraph;
  return buildSubgraphSchema([{ typeDefs, resolvers: { Int64: Int64Scalar, Map: MapScalar, ...resolvers } as never }]);
}

/** The generated SDL of subgraph `name` (`npm run generate`, from its protos' GraphQL options), parsed. */
export function subgraphTypeDefs(name: SubgraphKey): DocumentNode {
  return parse(SUBGRAPH_SDL[name]);
}

/**
 * The resolvers of subgraph `name`'s deprecated root fields (the `graphql_error` option of their
 * RPCs): each always fails `unimplemented` with its fixed message, with no auth check and no side
 * effect (graphql.md §1.3). Merge them into the bound resolvers, by operation type.
 */
export function fixedErrorResolvers(name: SubgraphKey): { Query: Record<string, () => Promise<never>>; Mutation: Record<string, () => Promise<never>> } {
  const errors = SUBGRAPH_FIXED_ERRORS[name];
  const of = (fields: Record<string, string>) => Object.fromEntries(Object.entries(fields).map(([field, message]) => [field, alwaysFails('unimplemented', message)]));
  return { Query: of(errors.Query), Mutation: of(errors.Mutation) };
}

/**
 * The resolvers of subgraph `name`'s deprecated field names (the `graphql_alias` option): type →
 * alias → a resolver returning the field it stands for (`InviteMembersResponse.Users` → `users`).
 */
export function aliasResolvers(name: SubgraphKey): Record<string, Record<string, (parent: Record<string, unknown>) => unknown>> {
  return Object.fromEntries(Object.entries(SUBGRAPH_ALIASES[name]).map(([type, fields]) =>
    [type, Object.fromEntries(Object.entries(fields).map(([alias, field]) => [alias, (parent: Record<string, unknown>) => parent[field]]))]));
}
