/**
 * @module authz/openfga-api/grpc
 * The gRPC form of OpenFGA's API (`openfga.v1.OpenFGAService`, issue 36 §1) on its own listener of the
 * authz service (`--openfga-grpc-port`), answered by the same {@link OpenFgaOperations} as the HTTP form.
 * The messages are OpenFGA's published ones: `openfga-v1.binpb` is the FileDescriptorSet of
 * openfga/v1/openfga_service.proto and its imports, written from the Go module github.com/openfga/api/proto
 * (the version the pinned OpenFGA server is built with) by scripts/gen-openfga-protos.sh. A request is
 * decoded with those descriptors, turned into the JSON form the HTTP API takes (each field under its
 * `json_name`, Struct as a JSON object, Timestamp as RFC 3339, wrappers as their value), handled, and the
 * JSON answer encoded back. Authentication is the HTTP form's (`authorization: Bearer …` metadata). Errors
 * carry OpenFGA's gRPC codes: the number of the error's name in `openfga.v1.ErrorCode`,
 * `NotFoundErrorCode`, `AuthErrorCode` or `InternalErrorCode` (e.g. 2000 `validation_error`), as
 * OpenFGA's server sends them; UNIMPLEMENTED, UNAVAILABLE and DEADLINE_EXCEEDED otherwise.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import descriptorExt from 'protobufjs/ext/descriptor/index.js';
import type { Logger, Registry } from '@gatehouse/observability';
import { OpenFgaError } from './errors.ts';
import { authenticate, openFgaSeries, type OpenFgaAuthn } from './http.ts';
import type { OpenFgaOperations } from './operations.ts';

type Json = Record<string, unknown>;
const SERVICE = 'openfga.v1.OpenFGAService';

/** OpenFGA's descriptors, loaded once: the protobufjs root and each field's JSON name by `type.field`. */
interface Protos {
  root: protobuf.Root;
  jsonNames: Map<string, string>;
  errorCodes: Map<string, number>;
}

let loaded: Protos | null = null;

/** Loads `openfga-v1.binpb` (next to this module). @throws Error when it is missing or not a descriptor set */
export function openFgaProtos(): Protos {
  if (loaded) return loaded;
  const bytes = readFileSync(new URL('./openfga-v1.binpb', import.meta.url));
  const desc = descriptorExt as unknown as { FileDescriptorSet: protobuf.Type };
  const set = desc.FileDescriptorSet.toObject(desc.FileDescriptorSet.decode(bytes), { enums: String, longs: Number }) as {
    file: Array<{ package?: string; messageType?: DescMessage[]; enumType?: DescEnum[] }>;
  };
  const root = (protobuf.Root as unknown as { fromDescriptor(b: Uint8Array): protobuf.Root }).fromDescriptor(bytes);
  const jsonNames = new Map<string, string>();
  const errorCodes = new Map<string, number>();
  const walk = (prefix: string, m: DescMessage): void => {
    const full = `${prefix}.${m.name}`;
    for (const f of m.field ?? []) jsonNames.set(`${full}.${f.name}`, f.jsonName ?? f.name);
    for (const n of m.nestedType ?? []) walk(full, n);
  };
  for (const file of set.file) {
    for (const m of file.messageType ?? []) walk(file.package ?? '', m);
    if (file.package !== 'openfga.v1') continue;
    for (const e of file.enumType ?? []) {
      if (!['ErrorCode', 'NotFoundErrorCode', 'AuthErrorCode', 'InternalErrorCode'].includes(e.name)) continue;
      for (const v of e.value ?? []) if (v.number >= 1000) errorCodes.set(v.name, v.number);
    }
  }
  loaded = { root, jsonNames, errorCodes };
  return loaded;
}
interface DescMessage { name: string; field?: Array<{ name: string; jsonName?: string }>; nestedType?: DescMessage[] }
interface DescEnum { name: string; value?: Array<{ name: string; number: number }> }

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A google.protobuf.Value (protobufjs object) as JSON. */
function valueToJson(v: Json): unknown {
  if ('struct_value' in v) return structToJson(v.struct_value as Json);
  if ('list_value' in v) return ((v.list_value as Json).values as Json[] | undefined ?? []).map(valueToJson);
  if ('number_value' in v) return v.number_value;
  if ('string_value' in v) return v.string_value;
  if ('bool_value' in v) return v.bool_value;
  return null;
}
// a Struct's `fields` map is a repeated FieldsEntry {key, value} as loaded from the descriptor set
const structToJson = (s: Json): Json => Object.fromEntries(((s.fields as Json[] | undefined) ?? []).map((e) => [String(e.key), valueToJson((e.value ?? {}) as Json)]));
/** JSON as a google.protobuf.Value (protobufjs object). */
function jsonToValue(v: unknown): Json {
  if (v === null || v === undefined) return { null_value: 'NULL_VALUE' };
  if (typeof v === 'number') return { number_value: v };
  if (typeof v === 'string') return { string_value: v };
  if (typeof v === 'boolean') return { bool_value: v };
  if (Array.isArray(v)) return { list_value: { values: v.map(jsonToValue) } };
  return { struct_value: jsonToStruct(v as Json) };
}
const jsonToStruct = (o: Json): Json => ({ fields: Object.entries(o).map(([key, v]) => ({ key, value: jsonToValue(v) })) });

const WRAPPERS = new Set(['DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map((n) => `google.protobuf.${n}`));
const fullName = (t: protobuf.Type | protobuf.Enum): string => t.fullName.replace(/^\./, '');
/**
 * The value type of a map field as protobufjs loads it from a descriptor set (a repeated `…Entry` message
 * of `key` and `value`, not a MapField), or undefined for any other field.
 */
function mapEntryValue(field: protobuf.Field): protobuf.Field | undefined {
  const rt = field.resolvedType;
  if (!field.repeated || !(rt instanceof protobuf.Type) || !rt.name.endsWith('Entry')) return undefined;
  const opts = rt.options as Record<string, unknown> | undefined;
  if (opts?.map_entry !== true && opts?.mapEntry !== true && !(rt.fields.key && rt.fields.value && rt.fieldsArray.length === 2)) return undefined;
  return rt.fields.value;
}

/** A decoded message (protobufjs `toObject`, proto field names) in OpenFGA's JSON form. */
function toJson(p: Protos, type: protobuf.Type, obj: Json): unknown {
  const name = fullName(type);
  if (name === 'google.protobuf.Struct') return structToJson(obj);
  if (name === 'google.protobuf.Value') return valueToJson(obj);
  if (name === 'google.protobuf.Timestamp') return new Date(Number(obj.seconds ?? 0) * 1000 + Math.floor(Number(obj.nanos ?? 0) / 1e6)).toISOString();
  if (WRAPPERS.has(name)) return obj.value;
  const out: Json = {};
  for (const field of type.fieldsArray) {
    const v = obj[field.name];
    const key = p.jsonNames.get(`${name}.${field.name}`) ?? field.name;
    if (v === undefined || v === null) {
      // proto3 has no absent bool: false is not sent, and OpenFGA reads it as false
      if (field.type === 'bool' && !field.repeated && !field.partOf) out[key] = false;
      continue;
    }
    const entry = mapEntryValue(field);
    if (entry) {
      const vt = entry.resolvedType;
      out[key] = Object.fromEntries((v as Json[]).map((e) => [String(e.key), vt instanceof protobuf.Type ? toJson(p, vt, (e.value ?? {}) as Json) : e.value]));
      continue;
    }
    const rt = field.resolvedType;
    const one = (x: unknown): unknown => (rt instanceof protobuf.Type ? toJson(p, rt, x as Json) : x);
    if (field.map) out[key] = Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, one(x)]));
    else if (field.repeated) out[key] = (v as unknown[]).map(one);
    else out[key] = one(v);
  }
  return out;
}

/** OpenFGA's JSON form of `type` (an answer of the operations) as a protobufjs object for `fromObject`. */
function fromJson(p: Protos, type: protobuf.Type, json: unknown): unknown {
  const name = fullName(type);
  if (name === 'google.protobuf.Struct') return jsonToStruct(isObj(json) ? json : {});
  if (name === 'google.protobuf.Value') return jsonToValue(json);
  if (name === 'google.protobuf.Timestamp') {
    const ms = typeof json === 'string' ? Date.parse(json) : Number.NaN;
    return Number.isNaN(ms) ? {} : { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 };
  }
  if (WRAPPERS.has(name)) return { value: json };
  if (!isObj(json)) return {};
  const out: Json = {};
  for (const field of type.fieldsArray) {
    const jsonName = p.jsonNames.get(`${name}.${field.name}`) ?? field.name;
    const camel = field.name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    const v = json[jsonName] ?? json[field.name] ?? json[camel];
    if (v === undefined || v === null) continue;
    const entry = mapEntryValue(field);
    if (entry) {
      const vt = entry.resolvedType;
      out[field.name] = Object.entries(isObj(v) ? v : {}).map(([k, x]) => ({ key: k, value: vt instanceof protobuf.Type ? fromJson(p, vt, x) : x }));
      continue;
    }
    const rt = field.resolvedType;
    const one = (x: unknown): unknown => (rt instanceof protobuf.Type ? fromJson(p, rt, x) : x);
    if (field.map) out[field.name] = Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, one(x)]));
    else if (field.repeated) out[field.name] = (Array.isArray(v) ? v : []).map(one);
    else out[field.name] = one(v);
  }
  return out;
}

/** The gRPC status of an OpenFGA error, as OpenFGA's server sends it. */
function statusOf(p: Protos, e: OpenFgaError): { code: number; details: string } {
  const own = p.errorCodes.get(e.code);
  if (own !== undefined) return { code: own, details: e.message };
  const byStatus: Record<number, grpc.status> = {
    400: grpc.status.INVALID_ARGUMENT, 401: grpc.status.UNAUTHENTICATED, 404: grpc.status.NOT_FOUND, 405: grpc.status.UNIMPLEMENTED, 409: grpc.status.ABORTED,
    501: grpc.status.UNIMPLEMENTED, 503: grpc.status.UNAVAILABLE, 504: grpc.status.DEADLINE_EXCEEDED,
  };
  return { code: byStatus[e.status] ?? grpc.status.INTERNAL, details: e.message };
}

type Handler = (ops: OpenFgaOperations, r: Json) => Promise<unknown>;
const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const q = (v: unknown): string | undefined => (v === undefined || v === null || v === '' || v === 0 ? undefined : String(v));
/** A query-string-like record without its empty entries (the HTTP form's GET parameters). */
const query = (entries: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined));

/** Each method, as the HTTP form's route calls the operations. */
const METHODS: Record<string, Handler> = {
  ListStores: (o, r) => o.ListStores(query({ name: q(r.name), page_size: q(r.page_size), continuation_token: q(r.continuation_token) })),
  CreateStore: (o, r) => o.CreateStore(r),
  GetStore: (o, r) => o.GetStore(s(r.store_id)),
  DeleteStore: (o, r) => o.DeleteStore(s(r.store_id)),
  UpdateStore: (o, r) => o.UpdateStore(s(r.store_id), r),
  WriteAuthorizationModel: (o, r) => o.WriteAuthorizationModel(s(r.store_id), r),
  ReadAuthorizationModels: (o, r) => o.ReadAuthorizationModels(s(r.store_id), query({ page_size: q(r.page_size), continuation_token: q(r.continuation_token) })),
  ReadAuthorizationModel: (o, r) => o.ReadAuthorizationModel(s(r.store_id), s(r.id)),
  Write: (o, r) => o.Write(s(r.store_id), r),
  Read: (o, r) => o.Read(s(r.store_id), r),
  ReadChanges: (o, r) => o.ReadChanges(s(r.store_id), query({ type: q(r.type), page_size: q(r.page_size), continuation_token: q(r.continuation_token), start_time: q(r.start_time) })),
  Check: (o, r) => o.Check(s(r.store_id), r),
  BatchCheck: (o, r) => o.BatchCheck(s(r.store_id), r),
  Expand: (o, r) => o.Expand(s(r.store_id), r),
  ListObjects: (o, r) => o.ListObjects(s(r.store_id), r),
  StreamedListObjects: (o, r) => o.StreamedListObjects(s(r.store_id), r),
  ListUsers: (o, r) => o.ListUsers(s(r.store_id), r),
  WriteAssertions: (o, r) => o.WriteAssertions(s(r.store_id), s(r.authorization_model_id), r),
  ReadAssertions: (o, r) => o.ReadAssertions(s(r.store_id), s(r.authorization_model_id)),
};

/** A started gRPC listener of the OpenFGA API. */
export interface OpenFgaGrpcServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts `openfga.v1.OpenFGAService` on `host:port` over `ops` (plaintext gRPC, as OpenFGA's default
 * listener). Calls are counted in `gatehouse_authz_api_requests_total{api="openfga_grpc",method,code}`
 * (`code` the HTTP status the HTTP form would answer).
 * @throws Error when the port cannot be bound or the descriptors cannot be read
 */
export async function startOpenFgaGrpc(o: { host: string; port: number; ops: OpenFgaOperations; authn: OpenFgaAuthn; logger: Logger; registry: Registry }): Promise<OpenFgaGrpcServer> {
  const p = openFgaProtos();
  const service = p.root.lookupService(SERVICE);
  const table = openFgaSeries(o.registry);
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const req = method.resolvedRequestType!;
    const res = method.resolvedResponseType!;
    const handler = METHODS[method.name];
    definition[method.name] = {
      path: `/${SERVICE}/${method.name}`,
      requestStream: false,
      responseStream: Boolean(method.responseStream),
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    };
    /** the answer of one call, its JSON encoded as `res`, or the OpenFGA error it failed with */
    const answer = async (call: grpc.ServerUnaryCall<Buffer, Buffer> | grpc.ServerWritableStream<Buffer, Buffer>): Promise<unknown> => {
      const auth = call.metadata.get('authorization')[0];
      await authenticate(o.authn, typeof auth === 'string' ? auth : undefined);
      if (!handler) throw new OpenFgaError(501, 'unimplemented', `${method.name} is not served by this server`);
      let body: Json;
      try {
        body = toJson(p, req, req.toObject(req.decode(call.request), { enums: String, longs: Number })) as Json;
      } catch {
        throw new OpenFgaError(400, 'validation_error', 'the request is not a valid message');
      }
      return handler(o.ops, body);
    };
    const fail = (err: unknown, status: { code: number }): grpc.ServiceError => {
      const e = err instanceof OpenFgaError ? err : new OpenFgaError(500, 'internal_error', 'Internal Server Error');
      if (e.status >= 500) o.logger.error({ err, method: method.name }, 'OpenFGA API call failed');
      const st = statusOf(p, e);
      status.code = e.status;
      return Object.assign(new Error(st.details), { code: st.code, details: st.details, metadata: new grpc.Metadata() }) as grpc.ServiceError;
    };
    const encode = (json: unknown): Buffer => Buffer.from(res.encode(res.fromObject(fromJson(p, res, json) as Json)).finish());
    if (method.responseStream) {
      implementation[method.name] = (async (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
        const started = process.hrtime.bigint();
        const status = { code: 200 };
        try {
          // one message `{object}` per object, as OpenFGA streams them
          for (const object of (await answer(call)) as string[]) call.write(encode({ object }));
          call.end();
        } catch (err) {
          call.destroy(fail(err, status));
        } finally {
          table.series({ api: 'openfga_grpc', method: method.name, code: String(status.code) }).record(Number(process.hrtime.bigint() - started) / 1e9);
        }
      }) as grpc.handleServerStreamingCall<Buffer, Buffer>;
    } else {
      implementation[method.name] = ((call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const started = process.hrtime.bigint();
        const status = { code: 200 };
        answer(call).then((json) => callback(null, encode(json)), (err: unknown) => callback(fail(err, status), null)).finally(() => {
          table.series({ api: 'openfga_grpc', method: method.name, code: String(status.code) }).record(Number(process.hrtime.bigint() - started) / 1e9);
        });
      }) as grpc.handleUnaryCall<Buffer, Buffer>;
    }
  }
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 4 * 1024 * 1024 });
  server.addService(definition as grpc.ServiceDefinition, implementation);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
      setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 2000).unref();
    }),
  };
}
