/**
 * @module @gatehouse/rpc/proto
 * Loads `proto/gatehouse/<service>/v1/*.proto` (keepCase: the spec's snake_case names) and gives each
 * RPC a codec. The codec is what makes every surface answer identically (behaviour.md §0.1):
 * requests are checked against the proto types and stripped of unknown fields, absent optional fields
 * become `null`, and responses are filled to their full shape (every field present; unset optionals
 * `null`, lists `[]`, booleans `false`) whether they crossed gRPC or stayed in process.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import protobuf from 'protobufjs';
import { PUBLIC_API_NAMES, type InternalServiceName, type ServiceName } from '@gatehouse/contracts/service-names';
import { AppError } from '@gatehouse/errors';
import { checkJsonStrings, textRuleOf, type TextRule } from './input-rules.ts';

/** Root of the repository's `proto/` directory. */
export const PROTO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../proto');

/**
 * The services with a public proto API, and their service-to-service APIs (`<service>.internal`: served
 * only on the owning service's own port to callers holding the internal token, never routed by the
 * gateway or the public gRPC port). Both lists are generated from services/registry.ts.
 */
export type { InternalServiceName, ServiceName };
export type DescriptorName = ServiceName | InternalServiceName;

/** Every service with a proto (the names of ServiceName, at run time). */
const SERVICES: readonly ServiceName[] = PUBLIC_API_NAMES;

/**
 * The proto service full name of a descriptor name, by the layout every proto follows:
 * `proto/gatehouse/<service>/v1/<service>.proto` declares `gatehouse.<service>.v1.<Service>Service`
 * and, when it has one, `<Service>Internal` (`mfa.internal` → `gatehouse.mfa.v1.MfaInternal`).
 */
export type FullNameOf<D extends DescriptorName> = D extends `${infer S extends ServiceName}.internal`
  ? `gatehouse.${S}.v1.${Capitalize<S>}Internal`
  : D extends ServiceName ? `gatehouse.${D}.v1.${Capitalize<D>}Service` : never;

function fullNameOf<D extends DescriptorName>(name: D): FullNameOf<D> {
  const [service, internal] = name.split('.') as [ServiceName, string | undefined];
  const pascal = service[0]!.toUpperCase() + service.slice(1);
  return `gatehouse.${service}.v1.${pascal}${internal ? 'Internal' : 'Service'}` as FullNameOf<D>;
}

/** `proto/gatehouse/<service>/v1/<service>.proto`, relative to PROTO_ROOT. */
export const protoFileOf = (service: ServiceName): string => `gatehouse/${service}/v1/${service}.proto`;

/** Per-RPC codec: JSON-ish objects in the spec's wire shape on both sides. */
export interface MethodCodec {
  readonly name: string;
  /** `/gatehouse.authn.v1.AuthnService/Signup` */
  readonly path: string;
  readonly requestType: protobuf.Type;
  readonly responseType: protobuf.Type;
  /** who may call it: the RPC's `(gatehouse.common.v1.auth)` option, declared once in the proto */
  readonly auth: AuthClass;
  /** its REST route, from the `(gatehouse.common.v1.rest)` option (`"POST /v1/signup"`); absent: gRPC/GraphQL only */
  readonly rest?: { readonly method: 'GET' | 'POST'; readonly path: string };
  /** one line describing it: the `(gatehouse.common.v1.summary)` option, or '' */
  readonly summary: string;
  /** the GraphQL root field serving it: the `(gatehouse.common.v1.graphql)` option */
  readonly graphqlField?: string;
  /**
   * Whether calling it twice does no more than calling it once: its `idempotency_level` option
   * (google.protobuf.MethodOptions, descriptor.proto) is `NO_SIDE_EFFECTS` or `IDEMPOTENT`. A client
   * may send such a call again to another replica when the first one lost its connection.
   */
  readonly idempotent: boolean;
  /**
   * Whether it only reads: its `idempotency_level` option is `NO_SIDE_EFFECTS` (descriptor.proto). Every
   * other RPC counts as mutating, e.g. for what a delegated token (RFC 8693 `act`) may call without an
   * explicit write scope (libs/auth guard, issue 34 §3).
   */
  readonly readOnly: boolean;
  /**
   * Checks a caller's JSON request against the proto type and returns the normalised request.
   * @throws AppError `invalid_argument` naming the first field whose JSON type is wrong
   */
  normalizeRequest(input: unknown): Record<string, unknown>;
  /** Fills a response to its full shape (behaviour.md §0.1 response nulls). */
  normalizeResponse(output: unknown): Record<string, unknown>;
  encodeRequest(req: Record<string, unknown>): Buffer;
  decodeRequest(buf: Buffer): Record<string, unknown>;
  encodeResponse(res: Record<string, unknown>): Buffer;
  decodeResponse(buf: Buffer): Record<string, unknown>;
}

/**
 * One proto service's RPCs and their codecs. `N`, the service's full name, carries its generated
 * types to `defineService` and `typedClient` (./typed.ts).
 */
export interface ServiceDescriptor<N extends string = string> {
  readonly service: DescriptorName;
  /** fully-qualified proto service name */
  readonly fullName: N;
  readonly methods: ReadonlyMap<string, MethodCodec>;
}

let root: protobuf.Root | undefined;

// gatehouse/common/v1/options.proto extends google.protobuf.MethodOptions. protobufjs ships
// descriptor.proto pre-parsed but does not register it as a bundled import the way it does
// struct.proto; register it under its import path (as @grpc/proto-loader does).
protobuf.common('google/protobuf/descriptor.proto', createRequire(import.meta.url)('protobufjs/google/protobuf/descriptor.json') as Record<string, unknown>);

function loadRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (target.startsWith('google/') || path.isAbsolute(target) ? target : path.join(PROTO_ROOT, target));
  const files = SERVICES.map(protoFileOf);
  r.loadSync(files.map((f) => path.join(PROTO_ROOT, f)), { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

const descriptors = new Map<DescriptorName, ServiceDescriptor>();

/**
 * Returns the descriptor of one service's proto.
 * @throws Error when its proto does not declare the service (a programming error, not a caller error)
 */
export function serviceDescriptor<D extends DescriptorName>(service: D): ServiceDescriptor<FullNameOf<D>> {
  const cached = descriptors.get(service) as ServiceDescriptor<FullNameOf<D>> | undefined;
  if (cached) return cached;
  const fullName = fullNameOf(service);
  const svc = loadRoot().lookupService(fullName);
  const methods = new Map<string, MethodCodec>();
  for (const method of svc.methodsArray) {
    method.resolve();
    methods.set(method.name, { ...createCodec(`/${fullName}/${method.name}`, method.name, method.resolvedRequestType!, method.resolvedResponseType!, authClassOf(method)), ...bindingsOf(method) });
  }
  const desc: ServiceDescriptor<FullNameOf<D>> = { service, fullName, methods };
  descriptors.set(service, desc);
  return desc;
}

/**
 * Who may call an RPC (spec §5; behaviour.md §2.3): `public` no credential; `user` a user credential;
 * `mfa` the `mfa` cookie of an MFA session; `user_or_mfa` either; `admin` a super-admin credential;
 * `org_admin` a super-admin or an organization's admin; `permissions` a user or a super-admin
 * (check_permissions, list_permissions); `internal` another Gatehouse service (the internal token).
 */
export type AuthClass = 'public' | 'user' | 'mfa' | 'user_or_mfa' | 'admin' | 'org_admin' | 'permissions' | 'internal';

const AUTH_OPTION = '(gatehouse.common.v1.auth)';
const AUTH_CLASSES: ReadonlySet<string> = new Set<AuthClass>(['public', 'user', 'mfa', 'user_or_mfa', 'admin', 'org_admin', 'permissions', 'internal']);

/**
 * The auth class an RPC declares with `option (gatehouse.common.v1.auth) = AUTH_CLASS_…;`.
 * @throws Error when the option is missing or unknown (a contract bug: every RPC declares one)
 */
function authClassOf(method: protobuf.Method): AuthClass {
  const raw = method.options?.[AUTH_OPTION] as unknown;
  const name = typeof raw === 'string' ? raw.replace(/^AUTH_CLASS_/, '').toLowerCase() : '';
  if (!AUTH_CLASSES.has(name)) throw new Error(`${method.parent?.fullName ?? ''}.${method.name} declares no ${AUTH_OPTION} option`);
  return name as AuthClass;
}

/** `idempotency_level` values (descriptor.proto MethodOptions.IdempotencyLevel) that allow a second attempt. */
const IDEMPOTENT_LEVELS: ReadonlySet<string> = new Set(['NO_SIDE_EFFECTS', 'IDEMPOTENT']);

/**
 * The surfaces an RPC declares beside its auth class: `(gatehouse.common.v1.rest)` ("<METHOD> <path>"),
 * `(gatehouse.common.v1.summary)` and `(gatehouse.common.v1.graphql)`, and its standard `idempotency_level`.
 * @throws Error when the rest option is not `GET` or `POST` followed by an absolute path (a proto bug)
 */
function bindingsOf(method: protobuf.Method): Pick<MethodCodec, 'rest' | 'summary' | 'graphqlField' | 'idempotent' | 'readOnly'> {
  const opt = (name: string): string | undefined => {
    const raw = method.options?.[`(gatehouse.common.v1.${name})`] as unknown;
    return typeof raw === 'string' && raw !== '' ? raw : undefined;
  };
  const rest = opt('rest');
  const m = rest === undefined ? null : /^(GET|POST) (\/\S*)$/.exec(rest);
  if (rest !== undefined && !m) throw new Error(`${method.parent?.fullName ?? ''}.${method.name}: (gatehouse.common.v1.rest) must be "GET <path>" or "POST <path>", not "${rest}"`);
  const graphqlField = opt('graphql');
  return {
    ...(m ? { rest: { method: m[1] as 'GET' | 'POST', path: m[2]! } } : {}),
    summary: opt('summary') ?? '',
    ...(graphqlField ? { graphqlField } : {}),
    idempotent: IDEMPOTENT_LEVELS.has(String(method.options?.['idempotency_level'] ?? '')),
    readOnly: String(method.options?.['idempotency_level'] ?? '') === 'NO_SIDE_EFFECTS',
  };
}

/** Every service that has a proto. */
export function servicesWithProto(): ServiceName[] {
  return [...SERVICES];
}

const STRUCT = 'google.protobuf.Struct';
/** Repeated fields that are `null` rather than `[]` when empty (behaviour.md §2.1: recovery codes are null when not issued). */
const NULLABLE_LISTS = new Set(['authenticator_recovery_codes']);
const INT_TYPES = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64']);

/** How one field is shaped, worked out once per message type (the hot path reads only this). */
interface FieldPlan {
  readonly name: string;
  readonly repeated: boolean;
  /** proto3 `optional` (a synthetic oneof `_<name>`) or a message: absent means `null` */
  readonly optional: boolean;
  /** a list that is `null` rather than `[]` when empty */
  readonly nullableList: boolean;
  readonly kind: 'struct' | 'message' | 'enum' | 'int' | 'float' | 'bool' | 'string' | 'other';
  readonly message: protobuf.Type | undefined;
  /** the plan of `message`, filled on first use (message types may be recursive) */
  nested: readonly FieldPlan[] | undefined;
  /** the compiled request and response shapers of `message`, made on first use */
  shapeIn: Shaper | undefined;
  shapeOut: Shaper | undefined;
  readonly enumValues: Readonly<Record<string, number>> | undefined;
  /** the value of an absent non-optional, non-repeated field */
  readonly absent: unknown;
  /** for error messages: `string`, `integer`, `list of object`, ... */
  readonly expected: string;
  /** what a string (or each string of a list) may hold (input-rules.ts); null for other kinds */
  readonly rule: TextRule | null;
}

const plans = new WeakMap<protobuf.Type, readonly FieldPlan[]>();

/** The field plans of a message type, built on first use (resolving `fullName` walks parents: keep it off the hot path). */
function planOf(type: protobuf.Type): readonly FieldPlan[] {
  const cached = plans.get(type);
  if (cached) return cached;
  const plan = type.fieldsArray.map((field): FieldPlan => {
    field.resolve();
    const rt = field.resolvedType;
    const kind: FieldPlan['kind'] =
      rt instanceof protobuf.Type ? (rt.fullName.replace(/^\./, '') === STRUCT ? 'struct' : 'message')
        : rt instanceof protobuf.Enum ? 'enum'
          : INT_TYPES.has(field.type) ? 'int'
            : field.type === 'double' || field.type === 'float' ? 'float'
              : field.type === 'bool' ? 'bool'
                : field.type === 'string' ? 'string'
                  : 'other';
    const base = kind === 'struct' || kind === 'message' ? 'object' : kind === 'int' ? 'integer' : kind === 'bool' ? 'boolean' : field.type;
    return {
      name: field.name,
      repeated: field.repeated,
      optional: Boolean(field.partOf && field.partOf.name.startsWith('_')) || rt instanceof protobuf.Type,
      nullableList: field.repeated && NULLABLE_LISTS.has(field.name),
      kind,
      message: rt instanceof protobuf.Type ? rt : undefined,
      nested: undefined,
      shapeIn: undefined,
      shapeOut: undefined,
      enumValues: rt instanceof protobuf.Enum ? rt.values : undefined,
      absent: kind === 'int' || kind === 'float' ? 0 : kind === 'bool' ? false : kind === 'string' ? ''
        : kind === 'enum' ? (Object.keys((rt as protobuf.Enum).values)[0] ?? null) : null,
      expected: field.repeated ? `list of ${base}` : base,
      rule: kind === 'string' ? textRuleOf(field.name) : null,
    };
  });
  plans.set(type, plan);
  return plan;
}

/** JSON Schema (2020-12, the dialect of OpenAPI 3.1) of one wire value; `defs` receives message schemas. */
export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of `type`'s wire shape, derived from the same field plans the codec shapes values
 * with, so the documented and the served shapes cannot drift (issue 15 §8: OpenAPI from the protos).
 * `request`: every field may be absent (proto3), an `optional` or message field may also be `null`,
 * no other properties are listed as allowed (unknown ones are ignored). `response`: every field is
 * present (behaviour.md §0.1 full shape), `optional`/message fields are nullable, lists are arrays.
 * Message schemas go into `defs` under `<package>.<Message>` (responses) or `<...>.input` (requests)
 * and are referenced as `#/components/schemas/<key>`.
 * @returns a `$ref` to `type`'s schema
 */
export function messageSchema(type: protobuf.Type, direction: 'request' | 'response', defs: Record<string, JsonSchema>): JsonSchema {
  const name = type.fullName.replace(/^\.(gatehouse\.)?/, '');
  // a whole message that is a JSON object (the discovery documents): any object, as on the wire
  if (name === STRUCT) return { type: 'object', additionalProperties: true };
  const key = direction === 'request' ? `${name}.input` : name;
  const ref = { $ref: `#/components/schemas/${key}` };
  if (defs[key] !== undefined) return ref;
  defs[key] = {}; // reserved: recursive types refer to it while it is built
  const properties: Record<string, JsonSchema> = {};
  for (const f of planOf(type)) {
    let item: JsonSchema = {};
    switch (f.kind) {
      case 'struct': item = { type: 'object', additionalProperties: true }; break;
      case 'message': item = messageSchema(f.message!, direction, defs); break;
      case 'enum': item = { type: 'string', enum: Object.keys(f.enumValues!) }; break;
      case 'int': item = { type: 'integer' }; break;
      case 'float': item = { type: 'number' }; break;
      case 'bool': item = { type: 'boolean' }; break;
      case 'string':
      case 'other': item = { type: 'string' }; break; // `other`: bytes, base64 text on the wire
    }
    let schema: JsonSchema = f.repeated ? { type: f.nullableList ? ['array', 'null'] : 'array', items: item } : item;
    if (!f.repeated && f.optional) schema = { anyOf: [schema, { type: 'null' }] };
    properties[f.name] = schema;
  }
  defs[key] = {
    type: 'object',
    properties,
    ...(direction === 'response' ? { required: Object.keys(properties), additionalProperties: false } : {}),
  };
  return ref;
}

/** The plan of a message-typed field's type. */
function nestedPlan(f: FieldPlan): readonly FieldPlan[] {
  return (f.nested ??= planOf(f.message!));
}

/** The value of an absent field in a full-shaped object. */
function absentValue(f: FieldPlan): unknown {
  if (f.repeated) return f.nullableList ? null : [];
  return f.optional ? null : f.absent;
}

/**
 * A request value of the wrong JSON type, on its way up to {@link normalizeRequestOf}: each enclosing
 * message prepends its field (`checks[3]`), so the success path builds no path strings at all.
 */
class FieldRefusal {
  readonly path: string[];
  readonly expected: string;
  /** a JSON-object field (google.protobuf.Struct): refused as `malformed <field>` (behaviour.md §3.1 app_data) */
  readonly malformed: boolean;
  /** the value has the right type but breaks its field's input rule (input-rules.ts): `expected` holds the reason */
  readonly ruled: boolean;
  constructor(path: string[], expected: string, malformed = false, ruled = false) {
    this.path = path;
    this.expected = expected;
    this.malformed = malformed;
    this.ruled = ruled;
  }
}

/** A refusal of a string that breaks its field's input rule. */
const ruleRefusal = (path: string[], reason: string): FieldRefusal => new FieldRefusal(path, reason, false, true);

function within(err: unknown, segment: string): unknown {
  if (err instanceof FieldRefusal) err.path.unshift(segment);
  return err;
}

/** Checks one scalar JSON value against a proto scalar type and returns the normalised value. @throws FieldRefusal */
function checkScalar(f: FieldPlan, value: unknown): unknown {
  switch (f.kind) {
    case 'int':
    case 'float':
      // behaviour.md §0.1: a number, or a string of digits for compatibility
      if (typeof value === 'number' && Number.isFinite(value)) {
        if (f.kind === 'int' && !Number.isInteger(value)) throw new FieldRefusal([], f.expected);
        return value;
      }
      if (typeof value === 'string' && /^-?\d{1,16}$/.test(value.trim())) return Number(value.trim());
      throw new FieldRefusal([], f.expected);
    case 'bool':
      if (typeof value === 'boolean') return value;
      throw new FieldRefusal([], f.expected);
    case 'string':
      if (typeof value === 'string') return value;
      throw new FieldRefusal([], f.expected);
    case 'enum':
      if (typeof value === 'string' && value in f.enumValues!) return value;
      throw new FieldRefusal([], f.expected);
    case 'struct':
    case 'message':
    case 'other':
      return value;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One message's shaping, compiled from its plan (see {@link compileShaper}). */
type Shaper = (value: unknown) => Record<string, unknown>;

/** The compiled request shaper of a message-typed field's type. */
function shapeInOf(f: FieldPlan): Shaper {
  return (f.shapeIn ??= compileShaper(nestedPlan(f), 'in'));
}

/** The compiled response shaper of a message-typed field's type. */
function shapeOutOf(f: FieldPlan): Shaper {
  return (f.shapeOut ??= compileShaper(nestedPlan(f), 'out'));
}

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NO_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Compiles one message type's plan into a shaping function, once per type, so that a request or a
 * response (a 100-check call has 100 nested messages each way) is shaped by straight-line code: one
 * property read per field and one object literal of a fixed shape, instead of a loop over the plan
 * that reads and writes `obj[name]` for every message type through the same (megamorphic) sites.
 *
 * - `'in'` (JSON request → normalised request): unknown fields dropped; an absent or null field is
 *   `[]` (repeated), `null` (proto3 optional or message) or its type's default; a value of the wrong
 *   JSON type throws {@link FieldRefusal} naming the field (`checks[3]`, nested names prepended).
 * - `'out'` (a handler's object → the full response shape): lenient, it never throws; an absent field
 *   is `null`/`[]`/default as above (`null` for an empty {@link NULLABLE_LISTS} list), a non-list value
 *   of a repeated field is `[]`, and lists are copied.
 * Field names come from our .proto files and must be identifiers (checked here).
 * @throws Error when a field name is not an identifier (a programming error in a .proto file)
 */
function compileShaper(plan: readonly FieldPlan[], direction: 'in' | 'out'): Shaper {
  const lit = (v: unknown): string => JSON.stringify(v);
  const body: string[] = [direction === 'in'
    ? 'if (!isPlainObject(value)) throw new Refusal([], "object");\nconst src = value;'
    : 'const src = isPlainObject(value) ? value : NO_FIELDS;'];
  plan.forEach((f, k) => {
    if (!FIELD_NAME.test(f.name) || f.name === '__proto__') throw new Error(`proto field name ${lit(f.name)} is not an identifier`);
    const name = lit(f.name);
    const v = `v${k}`;
    const expected = lit(f.expected);
    body.push(`let ${v} = src[${name}];`);
    if (direction === 'in' && f.repeated) {
      const element = f.kind === 'string'
        ? `if (typeof x !== "string") throw new Refusal([${name} + "[" + i + "]"], ${expected});\nconst why = rule${k}(x); if (why !== null) throw ruled([${name} + "[" + i + "]"], why);\nlist[i] = x;`
        : `try { list[i] = ${f.kind === 'message' ? 'shape(x)' : `valueIn(plan[${k}], x)`}; } catch (err) { throw within(err, ${name} + "[" + i + "]"); }`;
      body.push(
        `if (${v} === undefined || ${v} === null) ${v} = [];`,
        `else {`,
        `  if (!Array.isArray(${v})) throw new Refusal([${name}], ${expected});`,
        ...(f.kind === 'message' ? [`  const shape = shapeInOf(plan[${k}]);`] : []),
        `  const list = new Array(${v}.length);`,
        `  for (let i = 0; i < list.length; i++) {`,
        `    const x = ${v}[i];`,
        `    ${element}`,
        `  }`,
        `  ${v} = list;`,
        `}`,
      );
    } else if (direction === 'in') {
      body.push(`if (${v} === undefined || ${v} === null) ${v} = ${f.optional ? 'null' : lit(f.absent)};`);
      if (f.kind === 'string') body.push(`else if (typeof ${v} !== "string") throw new Refusal([${name}], ${expected});`, `else { const why = rule${k}(${v}); if (why !== null) throw ruled([${name}], why); }`);
      else body.push(`else try { ${v} = ${f.kind === 'message' ? `shapeInOf(plan[${k}])(${v})` : `valueIn(plan[${k}], ${v})`}; } catch (err) { throw within(err, ${name}); }`);
    } else if (f.repeated) {
      const empty = f.nullableList ? ` || (Array.isArray(${v}) && ${v}.length === 0)` : '';
      body.push(
        `if (${v} === undefined || ${v} === null${empty}) ${v} = ${f.nullableList ? 'null' : '[]'};`,
        `else if (!Array.isArray(${v})) ${v} = [];`,
        f.kind === 'message'
          ? `else { const shape = shapeOutOf(plan[${k}]); const list = new Array(${v}.length); for (let i = 0; i < list.length; i++) list[i] = shape(${v}[i]); ${v} = list; }`
          : `else ${v} = ${v}.slice();`,
      );
    } else {
      body.push(`if (${v} === undefined || ${v} === null) ${v} = ${f.optional ? 'null' : lit(f.absent)};`);
      if (f.kind === 'message') body.push(`else ${v} = shapeOutOf(plan[${k}])(${v});`);
    }
  });
  body.push(`return { ${plan.map((f, k) => `${f.name}: v${k}`).join(', ')} };`);
  // each string field's input rule, bound once as a local of the shaper (`rule3`)
  const rules = direction === 'in' ? plan.flatMap((f, k) => (f.rule ? [`const rule${k} = plan[${k}].rule.check;`] : [])) : [];
  // the source is generated from our own .proto field plans (names checked above), never from input
  const make = new Function('isPlainObject', 'Refusal', 'ruled', 'within', 'valueIn', 'shapeInOf', 'shapeOutOf', 'NO_FIELDS', 'plan',
    `"use strict";\n${rules.join('\n')}\nreturn function shape_${direction}(value) {\n${body.join('\n')}\n};`) as (...deps: unknown[]) => Shaper;
  return make(isPlainObject, FieldRefusal, ruleRefusal, within, normalizeValueIn, shapeInOf, shapeOutOf, NO_FIELDS, plan);
}

/** One value (or list element) of field `f` that is not a string or a message. @throws FieldRefusal */
function normalizeValueIn(f: FieldPlan, value: unknown): unknown {
  switch (f.kind) {
    case 'string': {
      if (typeof value !== 'string') throw new FieldRefusal([], f.expected);
      const why = f.rule!.check(value);
      if (why !== null) throw ruleRefusal([], why);
      return value;
    }
    case 'message':
      return shapeInOf(f)(value);
    case 'struct': {
      if (!isPlainObject(value)) throw new FieldRefusal([], f.expected, true);
      const found = checkJsonStrings(value);
      if (found) throw ruleRefusal([found[0].join('.').replace(/\.\[/g, '[')].filter((p) => p !== ''), found[1]);
      return value;
    }
    case 'int':
    case 'float':
    case 'bool':
    case 'enum':
    case 'other':
      return checkScalar(f, value);
  }
}

/**
 * The request normaliser of one message type.
 * @throws AppError `invalid_argument`: `invalid value for field "<path>": expected <type>` naming the first
 *   offending field (`checks[3].relation`); `malformed <field>` for a JSON-object field that is not one
 *   (`malformed app_data`); `invalid JSON body` when the request is not an object
 */
function normalizeRequestOf(type: protobuf.Type): (input: unknown) => Record<string, unknown> {
  // compiled on the first request of this RPC, not when the service's descriptor is built: most RPCs
  // are never called before `/healthz`, and compiling every shaper was ≈ a third of the descriptors'
  // start-up CPU (issue 38 §5)
  let shape: Shaper | undefined;
  return (input) => {
    try {
      return (shape ??= compileShaper(planOf(type), 'in'))(input ?? {});
    } catch (err) {
      if (!(err instanceof FieldRefusal)) throw err;
      if (err.path.length === 0) throw new AppError('invalid_argument', 'invalid JSON body');
      const field = err.path.join('.');
      throw new AppError('invalid_argument', err.malformed ? `malformed ${field}`
        : err.ruled && err.expected.startsWith('must be') ? `${field} ${err.expected}`
          : `invalid value for field "${field}": ${err.ruled ? err.expected : `expected ${err.expected}`}`);
    }
  };
}

// --- google.protobuf.Struct <-> plain JSON --------------------------------------------------------

function toProtoValue(v: unknown): Record<string, unknown> {
  if (v === null || v === undefined) return { nullValue: 0 };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toProtoValue) } };
  if (typeof v === 'object') return { structValue: toStruct(v as Record<string, unknown>) };
  return { stringValue: String(v) };
}

function toStruct(obj: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = toProtoValue(v);
  return { fields };
}

function fromProtoValue(v: Record<string, unknown>): unknown {
  if ('structValue' in v && v.structValue) return fromStruct(v.structValue as Record<string, unknown>);
  if ('listValue' in v && v.listValue) return ((v.listValue as { values?: Record<string, unknown>[] }).values ?? []).map(fromProtoValue);
  if ('stringValue' in v) return v.stringValue;
  if ('numberValue' in v) return v.numberValue;
  if ('boolValue' in v) return v.boolValue;
  return null;
}

function fromStruct(s: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries((s.fields as Record<string, Record<string, unknown>>) ?? {})) out[k] = fromProtoValue(v);
  return out;
}

/** Normalised object → protobufjs plain object (Struct fields converted, nulls dropped). */
function toWire(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of planOf(type)) {
    const value = obj[f.name];
    if (value === undefined || value === null) continue;
    const conv = (v: unknown): unknown =>
      f.kind === 'struct' ? toStruct(v as Record<string, unknown>)
        : f.kind === 'message' ? toWire(f.message!, v as Record<string, unknown>)
          : v;
    out[f.name] = f.repeated ? (value as unknown[]).map(conv) : conv(value);
  }
  return out;
}

/** protobufjs decoded object → normalised object. */
function fromWire(type: protobuf.Type, obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of planOf(type)) {
    const value = obj[f.name];
    if (value === undefined || value === null || (f.nullableList && Array.isArray(value) && value.length === 0)) {
      out[f.name] = absentValue(f);
      continue;
    }
    const conv = (v: unknown): unknown =>
      f.kind === 'struct' ? fromStruct(v as Record<string, unknown>)
        : f.kind === 'message' ? fromWire(f.message!, v as Record<string, unknown>)
          : v;
    out[f.name] = f.repeated ? (value as unknown[]).map(conv) : conv(value);
  }
  return out;
}

const TO_OBJECT: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: false, arrays: false, oneofs: false };

/**
 * Shaping for a whole message: a top-level google.protobuf.Struct (e.g. GetOpenidConfiguration's
 * response) is a plain JSON object on the wire side, converted to and from `{fields}` only for protobuf.
 */
function shapes(type: protobuf.Type): {
  out(v: unknown): Record<string, unknown>;
  toWire(v: Record<string, unknown>): Record<string, unknown>;
  fromWire(v: Record<string, unknown>): Record<string, unknown>;
} {
  if (type.fullName.replace(/^\./, '') === STRUCT) {
    return {
      out: (v) => (isPlainObject(v) ? v : {}),
      toWire: (v) => toStruct(v),
      fromWire: (v) => fromStruct(v),
    };
  }
  let compiled: Shaper | undefined;
  const out = (v: unknown): Record<string, unknown> => (compiled ??= compileShaper(planOf(type), 'out'))(v);
  return { out, toWire: (v) => toWire(type, v), fromWire: (v) => fromWire(type, v) };
}

function createCodec(pathName: string, name: string, requestType: protobuf.Type, responseType: protobuf.Type, auth: AuthClass): MethodCodec {
  const reqShape = shapes(requestType);
  const resShape = shapes(responseType);
  return {
    name,
    path: pathName,
    requestType,
    responseType,
    auth,
    summary: '',
    idempotent: false,
    readOnly: false,
    normalizeRequest: normalizeRequestOf(requestType),
    normalizeResponse: (output) => resShape.out(output),
    encodeRequest: (req) => Buffer.from(requestType.encode(requestType.fromObject(reqShape.toWire(req))).finish()),
    decodeRequest: (buf) => reqShape.fromWire(requestType.toObject(requestType.decode(buf), TO_OBJECT)),
    encodeResponse: (res) => Buffer.from(responseType.encode(responseType.fromObject(resShape.toWire(resShape.out(res)))).finish()),
    decodeResponse: (buf) => resShape.fromWire(responseType.toObject(responseType.decode(buf), TO_OBJECT)),
  };
}
