/**
 * @module scripts/generate-subgraphs
 * Each service's Apollo Federation subgraph SDL, generated from proto/ by `npm run generate`
 * (issue 35 §1), as grpc-gateway and OpenFGA generate their surfaces: a public service's RPC with a
 * `(gatehouse.common.v1.graphql)` option is a root field of that service's subgraph, its request
 * message the argument and its response message the result. What the proto alone does not say is
 * declared beside it as options of proto/gatehouse/common/v1/options.proto:
 *
 * - on the RPC: `graphql_query` (a Query field; otherwise a Mutation), `graphql_arg` (the argument
 *   holding the request: `params` unless set, `*` for the request's fields as top-level arguments),
 *   `graphql_arg_optional` (a nullable request argument), `graphql_list` (the field returns the
 *   response's one repeated field as a bare list), `graphql_error` (a deprecated operation that always
 *   fails with this `unimplemented` message);
 * - on a message: `graphql_name` / `graphql_input` (its GraphQL output / input type name when it is
 *   not the message name), `graphql_shareable` (`@shareable`), `graphql_key` (a federation entity: the
 *   subgraph one of whose root fields returns it declares it whole, the others a `resolvable: false`
 *   stub of the key fields);
 * - on a field: `graphql_type` / `graphql_input_type` (the GraphQL type when it is not the default
 *   below), `graphql_omit` (not in GraphQL), `graphql_deprecated` (its `@deprecated` reason),
 *   `graphql_description`, `graphql_alias` (a deprecated second name of the field, `use <field>`), `graphql_input_description`
 *   (the description where the message is an input, when it differs);
 * - on the service: `graphql_extra_types` (space-separated messages the subgraph declares although
 *   none of its root fields reaches them, e.g. mfa's `AuthResponse`).
 *
 * Default field types: `string` → `String` (`ID` for a field named `id`), `bool` → `Boolean`, 64-bit
 * integers → `Int64`, 32-bit → `Int`, `google.protobuf.Struct` → `Map`, a message → its type; proto3
 * `optional` → nullable, other scalars → non-null; a message field is non-null on output and nullable
 * on input; `repeated` → `[T!]!` on output, `[T!]` on input.
 */
import { createRequire } from 'node:module';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PROTO = path.join(ROOT, 'proto');

protobuf.common('google/protobuf/descriptor.proto', createRequire(import.meta.url)('protobufjs/google/protobuf/descriptor.json') as Record<string, unknown>);

/** Every `.proto` file under proto/, relative to it. */
function protoFiles(prefix = ''): string[] {
  return readdirSync(path.join(PROTO, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? protoFiles(path.join(prefix, e.name)) : e.name.endsWith('.proto') ? [path.join(prefix, e.name)] : []).sort();
}

/** All of proto/, loaded with the wire (snake_case) field names and resolved. */
export function loadProtos(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('google/') || path.isAbsolute(target) ? target : path.join(PROTO, target));
  root.loadSync(protoFiles().map((f) => path.join(PROTO, f)), { keepCase: true });
  root.resolveAll();
  return root;
}

/** Whether a type is used as a GraphQL output type or an input type. */
export type Mode = 'output' | 'input';

/** A `(gatehouse.common.v1.<name>)` option of a method, message, field or service. */
export function gqlOption(element: protobuf.ReflectionObject, name: string): string | boolean | undefined {
  const raw = element.options?.[`(gatehouse.common.v1.${name})`] as unknown;
  return typeof raw === 'string' || typeof raw === 'boolean' ? raw : undefined;
}

const str = (element: protobuf.ReflectionObject, name: string): string | undefined => {
  const v = gqlOption(element, name);
  return typeof v === 'string' ? v : undefined;
};

/** The GraphQL name of a message in `mode`. */
export function typeNameOf(type: protobuf.Type, mode: Mode): string {
  return (mode === 'input' ? str(type, 'graphql_input') : str(type, 'graphql_name')) ?? type.name;
}

const INT64 = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT32 = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

/** The message type of a field, if it is one (Struct counts as the `Map` scalar, not a message). */
export function messageOf(field: protobuf.Field): protobuf.Type | undefined {
  const rt = field.resolvedType;
  return rt instanceof protobuf.Type && rt.fullName !== '.google.protobuf.Struct' ? rt : undefined;
}

/** A field's GraphQL type by the module's default rules (no override options). */
export function defaultTypeOf(field: protobuf.Field, mode: Mode): string {
  const message = messageOf(field);
  let base: string;
  if (message) base = typeNameOf(message, mode);
  else if (field.resolvedType instanceof protobuf.Type) base = 'Map';
  else if (field.type === 'string' || field.type === 'bytes') base = field.name === 'id' ? 'ID' : 'String';
  else if (field.type === 'bool') base = 'Boolean';
  else if (INT64.has(field.type)) base = 'Int64';
  else if (INT32.has(field.type)) base = 'Int';
  else if (field.type === 'double' || field.type === 'float') base = 'Float';
  else throw new Error(`${field.fullName}: no GraphQL type for ${field.type}; set (gatehouse.common.v1.graphql_type)`);
  if (field.repeated) return mode === 'output' ? `[${base}!]!` : `[${base}!]`;
  const optional = Boolean(field.partOf?.name.startsWith('_')) || (message !== undefined && mode === 'input');
  return optional ? base : `${base}!`;
}

/** A field's GraphQL type: its override option, else the default. */
export function typeOf(field: protobuf.Field, mode: Mode): string {
  return (mode === 'input' ? str(field, 'graphql_input_type') : undefined) ?? str(field, 'graphql_type') ?? defaultTypeOf(field, mode);
}

/** The named type under a GraphQL type expression (`[Foo!]!` → `Foo`). */
const baseOf = (type: string): string => type.replace(/[[\]!]/g, '');

/** A GraphQL string literal. */
const quote = (s: string): string => JSON.stringify(s);

/** One root field of a subgraph, from its RPC. */
interface RootField {
  op: 'Query' | 'Mutation';
  sdl: string;
}

/**
 * The SDL of the subgraph of the proto services of one package (`gatehouse.admin.v1.AdminService` and
 * `AdminDeprecatedService`), or null when none of their RPCs has a `(gatehouse.common.v1.graphql)` option.
 * @throws Error on a contract bug: a list field whose response has not one field, two messages with
 *   one GraphQL name, a field type the defaults cannot map
 */
export function subgraphSdl(root: protobuf.Root, services: readonly string[]): string | null {
  const svcs = services.map((s) => root.lookupService(s));
  const service = services.join(' + ');
  const outputs = new Map<string, protobuf.Type>();
  const inputs = new Map<string, protobuf.Type>();
  const returned = new Set<protobuf.Type>();
  const use = (type: protobuf.Type, mode: Mode): string => {
    const name = typeNameOf(type, mode);
    const seen = (mode === 'output' ? outputs : inputs).get(name);
    if (seen && seen !== type) throw new Error(`${service}: GraphQL ${mode} type ${name} is both ${seen.fullName} and ${type.fullName}`);
    (mode === 'output' ? outputs : inputs).set(name, type);
    return name;
  };
  const roots: RootField[] = [];
  for (const m of svcs.flatMap((svc) => svc.methodsArray)) {
    const field = str(m, 'graphql');
    if (!field) continue;
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    let args = '';
    if (req.fieldsArray.length > 0) {
      const arg = str(m, 'graphql_arg') ?? 'params';
      if (arg === '*') {
        args = `(${req.fieldsArray.map((f) => `${f.name}: ${typeOf(f, 'input')}`).join(', ')})`;
        for (const f of req.fieldsArray) { const msg = messageOf(f); if (msg) use(msg, 'input'); }
      } else {
        args = `(${arg}: ${use(req, 'input')}${gqlOption(m, 'graphql_arg_optional') === true ? '' : '!'})`;
      }
    }
    let result: string;
    if (gqlOption(m, 'graphql_list') === true) {
      if (res.fieldsArray.length !== 1) throw new Error(`${service}.${m.name}: graphql_list needs a response with exactly one field`);
      const only = res.fieldsArray[0]!;
      result = typeOf(only, 'output');
      const msg = messageOf(only);
      if (msg) { use(msg, 'output'); returned.add(msg); }
    } else {
      result = `${use(res, 'output')}!`;
      returned.add(res);
    }
    roots.push({ op: gqlOption(m, 'graphql_query') === true ? 'Query' : 'Mutation', sdl: `    ${field}${args}: ${result}` });
  }
  if (roots.length === 0) return null;
  for (const extra of svcs.map((svc) => str(svc, 'graphql_extra_types') ?? '').join(' ').split(/\s+/).filter(Boolean)) use(root.lookupType(extra), 'output');

  const fieldsOf = (type: protobuf.Type, mode: Mode): string[] => type.fieldsArray.flatMap((f) => {
    if (gqlOption(f, 'graphql_omit') === true) return [];
    const t = typeOf(f, mode);
    const msg = messageOf(f);
    if (msg && baseOf(t) === typeNameOf(msg, mode)) use(msg, mode);
    const description = (mode === 'input' ? str(f, 'graphql_input_description') : undefined) ?? str(f, 'graphql_description');
    const deprecated = str(f, 'graphql_deprecated');
    const alias = str(f, 'graphql_alias');
    return [
      `    ${description ? `${quote(description)} ` : ''}${f.name}: ${t}${deprecated ? ` @deprecated(reason: ${quote(deprecated)})` : ''}`,
      ...(alias && mode === 'output' ? [`    ${alias}: ${t} @deprecated(reason: ${quote(`use ${f.name}`)})`] : []),
    ];
  });

  const blocks: string[] = [];
  const done = new Set<string>();
  // types are discovered while their fields are printed: loop until no new one appears
  for (let progress = true; progress;) {
    progress = false;
    for (const [mode, map] of [['output', outputs], ['input', inputs]] as const) {
      for (const [name, type] of [...map]) {
        const key = `${mode} ${name}`;
        if (done.has(key)) continue;
        done.add(key);
        progress = true;
        if (mode === 'input') { blocks.push(`  input ${name} {\n${fieldsOf(type, 'input').join('\n')}\n  }`); continue; }
        const keyFields = str(type, 'graphql_key');
        const shareable = gqlOption(type, 'graphql_shareable') === true ? ' @shareable' : '';
        if (keyFields && !returned.has(type)) {
          const stub = type.fieldsArray.filter((f) => keyFields.split(/\s+/).includes(f.name)).map((f) => `    ${f.name}: ${typeOf(f, 'output')}`);
          blocks.push(`  type ${name} @key(fields: ${quote(keyFields)}, resolvable: false)${shareable} {\n${stub.join('\n')}\n  }`);
          continue;
        }
        blocks.push(`  type ${name}${keyFields ? ` @key(fields: ${quote(keyFields)})` : ''}${shareable} {\n${fieldsOf(type, 'output').join('\n')}\n  }`);
      }
    }
  }
  const op = (o: 'Query' | 'Mutation'): string[] => {
    const fields = roots.filter((r) => r.op === o).map((r) => r.sdl);
    return fields.length === 0 ? [] : [`  type ${o} {\n${fields.join('\n')}\n  }`];
  };
  return [
    '  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable"])',
    '',
    '  scalar Int64',
    '  scalar Map',
    '',
    [...op('Query'), ...op('Mutation'), ...blocks].join('\n\n'),
    '',
  ].join('\n');
}

/**
 * The root fields of a subgraph that always fail (`graphql_error`), by operation type: field → the
 * `unimplemented` message. They have no handler; the subgraph's resolvers answer with the message.
 */
export function fixedErrors(root: protobuf.Root, services: readonly string[]): { Query: Record<string, string>; Mutation: Record<string, string> } {
  const out: { Query: Record<string, string>; Mutation: Record<string, string> } = { Query: {}, Mutation: {} };
  for (const m of services.flatMap((s) => root.lookupService(s).methodsArray)) {
    const field = str(m, 'graphql');
    const message = str(m, 'graphql_error');
    if (field && message) out[gqlOption(m, 'graphql_query') === true ? 'Query' : 'Mutation'][field] = message;
  }
  return out;
}

/**
 * The deprecated second names of a subgraph's fields (`graphql_alias`): type → alias → the field it
 * reads (`InviteMembersResponse.Users` → `users`).
 */
export function aliases(root: protobuf.Root, services: readonly string[]): Record<string, Record<string, string>> {
  const sdl = subgraphSdl(root, services) ?? '';
  const out: Record<string, Record<string, string>> = {};
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type) {
        for (const f of child.fieldsArray) {
          const alias = str(f, 'graphql_alias');
          const name = typeNameOf(child, 'output');
          if (alias && new RegExp(`\\btype ${name}\\b`).test(sdl)) (out[name] ??= {})[alias] = f.name;
        }
      }
      if (child instanceof protobuf.Namespace || child instanceof protobuf.Type) walk(child);
    }
  };
  walk(root);
  return out;
}

/**
 * The subgraphs: every package with proto services that have GraphQL root fields, by subgraph name
 * (the package's: `gatehouse.authn.v1` → `authn`), with those services' full names.
 */
export function subgraphServices(root: protobuf.Root): Array<{ name: string; services: string[] }> {
  const found = new Map<string, string[]>();
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service && child.methodsArray.some((m) => str(m, 'graphql'))) {
        const name = child.fullName.split('.')[2]!;
        found.set(name, [...(found.get(name) ?? []), child.fullName.slice(1)]);
      } else if (child instanceof protobuf.Namespace) walk(child);
    }
  };
  walk(root);
  return [...found].map(([name, services]) => ({ name, services: services.sort() })).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The `subgraphs.ts` source: `SUBGRAPH_SDL` (subgraph name → SDL), `SUBGRAPH_FIXED_ERRORS` (the
 * `unimplemented` messages of deprecated root fields) and `SUBGRAPH_ALIASES` (deprecated field names).
 */
export function subgraphsSource(): string {
  const root = loadProtos();
  const subgraphs = subgraphServices(root);
  return [
    '// Code generated by scripts/generate-subgraphs.ts from proto/. DO NOT EDIT.',
    '/* eslint-disable */',
    '',
    '/** Each service\'s subgraph SDL, from the GraphQL options of its proto service. */',
    'export const SUBGRAPH_SDL = {',
    ...subgraphs.map((s) => `  ${s.name}: \`\n${subgraphSdl(root, s.services)!.replace(/[`\\$]/g, (c) => `\\${c}`)}\`,`),
    '} as const;',
    '',
    '/** The subgraphs, by name: the package of their proto services (`gatehouse.authn.v1` → `authn`). */',
    'export type SubgraphKey = keyof typeof SUBGRAPH_SDL;',
    '',
    '/** The deprecated root fields that always fail `unimplemented`, by operation type, with their messages. */',
    'export const SUBGRAPH_FIXED_ERRORS: Record<SubgraphKey, { Query: Record<string, string>; Mutation: Record<string, string> }> = {',
    ...subgraphs.map((s) => `  ${s.name}: ${JSON.stringify(fixedErrors(root, s.services))},`),
    '};',
    '',
    '/** The deprecated second names of fields: type → alias → the field whose value it returns. */',
    'export const SUBGRAPH_ALIASES: Record<SubgraphKey, Record<string, Record<string, string>>> = {',
    ...subgraphs.map((s) => `  ${s.name}: ${JSON.stringify(aliases(root, s.services))},`),
    '};',
    '',
  ].join('\n');
}
