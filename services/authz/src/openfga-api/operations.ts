/**
 * @module authz/openfga-api/operations
 * The methods of OpenFGA's `openfga.v1.OpenFGAService` (openfga/api `openfga/v1/openfga_service.proto`),
 * answered by Gatehouse's engine: request bodies and answers in OpenFGA's JSON form (snake_case fields,
 * as OpenFGA's HTTP API and SDKs send them), OpenFGA's error codes and limits. The stores are those of a
 * {@link StoreDirectory}: Gatehouse's own ({@link GATEHOUSE_STORE_ID}: the tuples and model the `/v1` API
 * reads and writes) and the ones created through the API.
 */
import { AppError } from '@gatehouse/errors';
import { transformer } from '@openfga/syntax-transformer';
import type { Engine, Tuple } from '../domain/index.ts';
import { TupleConflictError, parseDsl } from '../domain/index.ts';
import { OpenFgaError, fromEngineError, invalid } from './errors.ts';
import { GATEHOUSE_STORE_ID, GATEHOUSE_STORE_NAME, type StoreDirectory, type StoreEntry } from './stores.ts';

export { GATEHOUSE_STORE_ID, GATEHOUSE_STORE_NAME } from './stores.ts';

/** OpenFGA's limits as Gatehouse applies them (the `--openfga-*` flags). */
export interface OpenFgaLimits {
  /** writes plus deletes per Write call (OpenFGA maxTuplesPerWrite, default 100; at most the engine's 100 per side) */
  maxTuplesPerWrite: number;
  /** checks per BatchCheck call (OpenFGA maxChecksPerBatchCheck, default 50) */
  maxChecksPerBatchCheck: number;
  /** objects a ListObjects answers; 0 = the engine's cap (1000) */
  listObjectsMaxResults: number;
  /** users a ListUsers answers; 0 = the engine's cap (1000) */
  listUsersMaxResults: number;
  /** milliseconds a list call may take (0 = no deadline) */
  listDeadlineMs: number;
}

/** A tuple key on OpenFGA's wire: `user`, `relation`, `object`, optional `condition {name, context}`. */
interface WireTupleKey {
  user?: unknown;
  relation?: unknown;
  object?: unknown;
  condition?: { name?: unknown; context?: unknown } | null;
}

type Body = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const obj = (v: unknown): Body => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Body : {});

/**
 * A store name as OpenFGA accepts it in CreateStore and UpdateStore: 3-64 characters of
 * `^[a-zA-Z0-9\s\.\-\/^_&@]{3,64}$` (openfga/api `openfga_service.proto`, the `name` field's validation
 * rule; `\s` as Go's regexp reads it: tab, newline, form feed, carriage return, space).
 * @throws OpenFgaError 400 `validation_error` naming `request` as OpenFGA's validator does
 */
function storeName(v: unknown, request: string): string {
  const name = str(v);
  if (!/^[a-zA-Z0-9\t\n\f\r .\-/^_&@]{3,64}$/.test(name)) {
    throw invalid('validation_error', `invalid ${request}.Name: value does not match regex pattern "^[a-zA-Z0-9\\s\\.\\-\\/^_&@]{3,64}$"`);
  }
  return name;
}

/** A wire tuple key as the engine's tuple (the condition kept when named). */
function toTuple(k: unknown): Tuple {
  const key = obj(k) as WireTupleKey;
  const t: Tuple = { user: str(key.user), relation: str(key.relation), object: str(key.object) };
  const c = key.condition;
  if (c && typeof c === 'object' && str(c.name) !== '') t.condition = { name: str(c.name), context: (c.context ?? null) as Record<string, unknown> | null };
  return t;
}

/** `v` as JSON with its object keys sorted (two equal values give the same text). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Body)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/** Whether two tuple conditions are the same: the same name and context (an empty context as none). */
function sameCondition(a: Tuple['condition'], b: Tuple['condition']): boolean {
  const ctx = (c: Tuple['condition']): string => (c?.context && Object.keys(c.context).length > 0 ? canonical(c.context) : '');
  return (a?.name ?? '') === (b?.name ?? '') && ctx(a) === ctx(b);
}

/** An engine tuple as OpenFGA's `TupleKey` (the condition only when present). */
function toWire(t: Tuple): Body {
  const key: Body = { user: t.user, relation: t.relation, object: t.object };
  if (t.condition) key.condition = { name: t.condition.name, ...(t.condition.context ? { context: t.condition.context } : {}) };
  return key;
}

/** `contextual_tuples.tuple_keys` (Check, BatchCheck, ListObjects, Expand) or a bare list (ListUsers). */
function contextualOf(v: unknown): Tuple[] {
  const list = Array.isArray(v) ? v : obj(v).tuple_keys;
  return Array.isArray(list) ? list.map(toTuple) : [];
}

/** OpenFGA's `timestamp` field (RFC 3339, UTC) for a write time in ms, or nothing when it is unknown. */
const timestamp = (ms: number | null | undefined): { timestamp?: string } => (ms === null || ms === undefined ? {} : { timestamp: new Date(ms).toISOString() });

const keyText = (t: Tuple): string => `user: '${t.user}', relation: '${t.relation}', object: '${t.object}'`;

/** Runs `work` within the list deadline. @throws OpenFgaError 504 `deadline_exceeded` past it */
async function withinDeadline<T>(deadlineMs: number, work: Promise<T>): Promise<T> {
  if (deadlineMs <= 0) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OpenFgaError(504, 'deadline_exceeded', `the call did not finish within its deadline of ${deadlineMs} ms`)), deadlineMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The OpenFGA methods over one engine (the handlers of the HTTP listener, one per method). */
export interface OpenFgaOperations {
  ListStores(q: { name?: string; page_size?: string; continuation_token?: string }): Promise<Body>;
  GetStore(storeId: string): Promise<Body>;
  CreateStore(body: Body): Promise<Body>;
  UpdateStore(storeId: string, body: Body): Promise<Body>;
  DeleteStore(storeId: string): Promise<Body>;
  WriteAuthorizationModel(storeId: string, body: Body): Promise<Body>;
  ReadAuthorizationModels(storeId: string, q: { page_size?: string; continuation_token?: string }): Promise<Body>;
  ReadAuthorizationModel(storeId: string, id: string): Promise<Body>;
  Write(storeId: string, body: Body): Promise<Body>;
  Read(storeId: string, body: Body): Promise<Body>;
  ReadChanges(storeId: string, q: { type?: string; page_size?: string; continuation_token?: string; start_time?: string }): Promise<Body>;
  Check(storeId: string, body: Body): Promise<Body>;
  BatchCheck(storeId: string, body: Body): Promise<Body>;
  Expand(storeId: string, body: Body): Promise<Body>;
  ListObjects(storeId: string, body: Body): Promise<Body>;
  /** ListObjects' objects one by one, for StreamedListObjects (each becomes `{"result":{"object":…}}`) */
  StreamedListObjects(storeId: string, body: Body): Promise<string[]>;
  ListUsers(storeId: string, body: Body): Promise<Body>;
  WriteAssertions(storeId: string, modelId: string, body: Body): Promise<Body>;
  ReadAssertions(storeId: string, modelId: string): Promise<Body>;
}

/** Most assertions one model version keeps (OpenFGA's WriteAssertions limit). */
export const MAX_ASSERTIONS = 100;

/**
 * Builds the OpenFGA methods over the stores of `stores` (OpenFGA API v1, openfga_service.proto).
 * Every method throws only {@link OpenFgaError}: 404 `store_id_not_found` for an unknown store id, 400
 * with OpenFGA's code for bad input, 503 when the store fails, 500 `internal_error` otherwise.
 */
export function createOpenFgaOperations(stores: StoreDirectory, limits: OpenFgaLimits): OpenFgaOperations {
  const wireStore = (s: StoreEntry): Body => ({ id: s.id, name: s.name, created_at: new Date(s.createdAt).toISOString(), updated_at: new Date(s.updatedAt).toISOString() });
  /** Runs an engine call, its errors in OpenFGA's form (`storeId` names the store in them). */
  const run = async <T>(defaultCode: string, call: () => Promise<T>, storeId = GATEHOUSE_STORE_ID): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw fromEngineError(err, defaultCode, storeId);
    }
  };
  /** The engine of store `storeId`. @throws OpenFgaError 404 `store_id_not_found` */
  const storeEngine = async (storeId: string): Promise<Engine> => {
    const engine = await run('validation_error', () => stores.engine(storeId), storeId);
    if (!engine) throw new OpenFgaError(404, 'store_id_not_found', 'store not found');
    return engine;
  };
  /**
   * The engine a query or write of store `storeId` runs on: the store's own, answering with its active
   * model, or, when `authorization_model_id` names an older stored version, an engine pinned to that
   * version (OpenFGA evaluates a request against the model it names).
   * @throws OpenFgaError 404 `store_id_not_found`, 400 `authorization_model_not_found`, `latest_authorization_model_not_found`
   */
  const modelEngine = async (storeId: string, requested: unknown): Promise<Engine> => {
    const engine = await storeEngine(storeId);
    const m = await run('validation_error', () => engine.getModel(), storeId);
    const id = str(requested);
    if (id !== '' && id !== m.id) {
      const found = engine.readModels ? (await run('validation_error', () => engine.readModels!({ id }), storeId))[0] : undefined;
      if (!found || found.id !== id) throw invalid('authorization_model_not_found', `Authorization Model '${id}' not found`);
      const pinned = stores.pinned(storeId, found);
      if (!pinned) throw invalid('validation_error', `Authorization Model '${id}' is not the active model '${m.id}': this engine store answers with the active model only (omit authorization_model_id)`);
      return pinned;
    }
    if (m.id === '') throw invalid('latest_authorization_model_not_found', `No authorization models found for store '${storeId}'`);
    return engine;
  };
  const modelJson = (m: { id: string; dsl: string }): Body => ({ id: m.id, ...parseDsl(m.dsl) });
  /** An assertions call of model `modelId`: an unknown model is 400 `authorization_model_not_found`, as in OpenFGA. */
  const assertionsCall = async <T>(storeId: string, modelId: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') throw invalid('authorization_model_not_found', `Authorization Model '${modelId}' not found`);
      throw fromEngineError(err, 'validation_error', storeId);
    }
  };
  /** The stored tuple with `t`'s user, relation and object (its condition included), or null. */
  const stored = async (engine: Engine, t: Tuple): Promise<Tuple | null> =>
    (await run('validation_error', () => engine.readTuples({ user: t.user, relation: t.relation, object: t.object, page_size: 1 }))).tuples[0] ?? null;

  const checkOne = async (engine: Engine, key: unknown, contextual: unknown, context: unknown): Promise<boolean> => {
    const k = toTuple(key);
    if (k.user === '' || k.relation === '' || k.object === '') throw invalid('validation_error', 'tuple_key requires user, relation and object');
    const ctx = contextualOf(contextual);
    const [result] = await run('validation_error', () => engine.check(k.user, [{
      relation: k.relation, object: k.object, ...(ctx.length > 0 ? { contextual_tuples: ctx } : {}), ...(context != null ? { context } : {}),
    }]));
    return result!.allowed;
  };

  const listObjects = async (storeId: string, body: Body): Promise<string[]> => {
    const engine = await modelEngine(storeId, body.authorization_model_id);
    const type = str(body.type);
    const relation = str(body.relation);
    const user = str(body.user);
    if (type === '' || relation === '' || user === '') throw invalid('validation_error', 'type, relation and user are required');
    const ctx = contextualOf(body.contextual_tuples);
    // past the cap OpenFGA answers whichever objects it finds first: so may the engine, which then stops there
    const answer = await withinDeadline(limits.listDeadlineMs, run('validation_error', () => engine.listPermissions(user, {
      relation, object_type: type, any_first: true, ...(ctx.length > 0 ? { contextual_tuples: ctx } : {}), ...(body.context != null ? { context: body.context } : {}),
    })));
    return answer.objects;
  };

  return {
    async ListStores(q) {
      const pageSize = q.page_size ? Number(q.page_size) : 50;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw invalid('page_size_invalid', 'page_size must be between 1 and 100');
      let after: string | null = null;
      if (q.continuation_token) {
        after = Buffer.from(q.continuation_token, 'base64url').toString('utf8');
        if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(after)) throw invalid('invalid_continuation_token', 'Invalid continuation token');
      }
      // one more than the page tells whether another page follows
      const found = await run('validation_error', () => stores.list({ ...(q.name ? { name: q.name } : {}), afterId: after, limit: pageSize + 1 }));
      const page = found.slice(0, pageSize);
      const token = found.length > pageSize ? Buffer.from(page[page.length - 1]!.id, 'utf8').toString('base64url') : '';
      return { stores: page.map(wireStore), continuation_token: token };
    },
    async GetStore(storeId) {
      const found = await run('validation_error', () => stores.get(storeId), storeId);
      if (!found) throw new OpenFgaError(404, 'store_id_not_found', 'store not found');
      return wireStore(found);
    },
    async CreateStore(body) {
      const name = storeName(body.name, 'CreateStoreRequest');
      if (!stores.canCreate) throw new OpenFgaError(501, 'unimplemented', `this server has one store over --fga-store=openfga (id ${GATEHOUSE_STORE_ID}); new stores are made on the OpenFGA server`);
      return wireStore(await run('validation_error', () => stores.create(name)));
    },
    async UpdateStore(storeId, body) {
      const name = storeName(body.name, 'UpdateStoreRequest');
      if (storeId === GATEHOUSE_STORE_ID) {
        // the name every replica, SDK configuration and dashboard knows it by: renaming it to itself is a no-op
        if (name !== GATEHOUSE_STORE_NAME) throw invalid('validation_error', `Gatehouse's own store keeps its name '${GATEHOUSE_STORE_NAME}'; create a store of your own to name it`);
        return wireStore((await run('validation_error', () => stores.get(storeId), storeId))!);
      }
      const renamed = await run('validation_error', () => stores.rename(storeId, name), storeId);
      if (!renamed) throw new OpenFgaError(404, 'store_id_not_found', 'store not found');
      return wireStore(renamed);
    },
    async DeleteStore(storeId) {
      if (storeId === GATEHOUSE_STORE_ID) throw invalid('validation_error', 'Gatehouse\'s own store cannot be deleted; delete its tuples, then reset its model through the admin API');
      if (!(await run('validation_error', () => stores.delete(storeId), storeId))) throw new OpenFgaError(404, 'store_id_not_found', 'store not found');
      return {};
    },

    async WriteAuthorizationModel(storeId, body) {
      const engine = await storeEngine(storeId);
      if (!Array.isArray(body.type_definitions) || body.type_definitions.length === 0) {
        throw invalid('type_definitions_too_few_items', 'type_definitions must contain at least one type');
      }
      let dsl: string;
      try {
        dsl = transformer.transformJSONToDSL({
          schema_version: str(body.schema_version) || '1.1', type_definitions: body.type_definitions, conditions: obj(body.conditions),
        } as unknown as Parameters<typeof transformer.transformJSONToDSL>[0]);
      } catch (err) {
        throw invalid('invalid_authorization_model', `invalid authorization model: ${(err as Error).message}`);
      }
      const { id } = await run('invalid_authorization_model', () => engine.writeModel(dsl));
      return { authorization_model_id: id };
    },
    async ReadAuthorizationModels(storeId, q) {
      const engine = await storeEngine(storeId);
      const pageSize = q.page_size ? Number(q.page_size) : 50;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw invalid('page_size_invalid', 'page_size must be between 1 and 100');
      const readModels = engine.readModels;
      if (!readModels) {
        // a backend that keeps no versions of its own: the active one
        const m = await run('validation_error', () => engine.getModel());
        return { authorization_models: m.id === '' ? [] : [modelJson(m)], continuation_token: '' };
      }
      let before: string | null = null;
      if (q.continuation_token) {
        before = Buffer.from(q.continuation_token, 'base64url').toString('utf8');
        if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(before)) throw invalid('invalid_continuation_token', 'Invalid continuation token');
      }
      // one more than the page tells whether another page follows
      const models = await run('validation_error', () => readModels({ beforeId: before, limit: pageSize + 1 }));
      const page = models.slice(0, pageSize);
      const more = models.length > pageSize;
      return { authorization_models: page.map(modelJson), continuation_token: more ? Buffer.from(page[page.length - 1]!.id, 'utf8').toString('base64url') : '' };
    },
    async ReadAuthorizationModel(storeId, id) {
      const engine = await storeEngine(storeId);
      const found = engine.readModels
        ? (await run('validation_error', () => engine.readModels!({ id })))[0]
        : await run('validation_error', () => engine.getModel());
      if (!found || found.id !== id) throw invalid('authorization_model_not_found', `Authorization Model '${id}' not found`);
      return { authorization_model: modelJson(found) };
    },

    async Write(storeId, body) {
      const engine = await modelEngine(storeId, body.authorization_model_id);
      const w = obj(body.writes);
      const d = obj(body.deletes);
      const writes = Array.isArray(w.tuple_keys) ? w.tuple_keys.map(toTuple) : [];
      const deletes = Array.isArray(d.tuple_keys) ? d.tuple_keys.map(toTuple) : [];
      if (writes.length + deletes.length === 0) throw invalid('invalid_write_input', 'Invalid input. Make sure you provide at least one write or delete');
      if (writes.length + deletes.length > limits.maxTuplesPerWrite) {
        throw invalid('exceeded_entity_limit', `The number of write operations exceeds the allowed limit of ${limits.maxTuplesPerWrite}`);
      }
      const seen = new Set<string>();
      for (const t of [...writes, ...deletes]) {
        const key = `${t.user} ${t.relation} ${t.object}`;
        if (seen.has(key)) throw invalid('cannot_allow_duplicate_tuples_in_one_request', `duplicate tuple in write: ${keyText(t)}`);
        seen.add(key);
      }
      // OpenFGA refuses an existing write and a missing delete unless the request says to ignore them; an
      // ignored one is not written at all (no change in the log), and an existing tuple with another
      // condition is a conflict even then (OpenFGA storage TupleConditionConflictError: 409 Aborted)
      const ignoreDuplicates = str(w.on_duplicate) === 'ignore';
      const ignoreMissing = str(d.on_missing) === 'ignore';
      // neither ignored: the store decides inside the write's transaction (no read before it; of two
      // identical writes exactly one succeeds)
      if (!ignoreDuplicates && !ignoreMissing) {
        const conflicts = { existing: 'error', missing: 'error' } as const;
        try {
          await engine.write(writes, deletes, conflicts);
        } catch (err) {
          if (!(err instanceof TupleConflictError)) throw fromEngineError(err, 'validation_error', storeId);
          const what = err.kind === 'existing' ? 'cannot write a tuple which already exists' : 'cannot delete a tuple which does not exist';
          throw invalid('write_failed_due_to_invalid_input', `${what}: ${keyText(err.tuple)}: tuple to be written already existed or the tuple to be deleted did not exist`);
        }
        return {};
      }
      // an ignored duplicate is not written at all (no change in the log), so these are read first
      const toWrite: Tuple[] = [];
      for (const t of writes) {
        const found = await stored(engine, t);
        if (!found) {
          toWrite.push(t);
          continue;
        }
        if (!ignoreDuplicates) throw invalid('write_failed_due_to_invalid_input', `cannot write a tuple which already exists: ${keyText(t)}: tuple to be written already existed or the tuple to be deleted did not exist`);
        if (!sameCondition(found.condition, t.condition)) {
          throw new OpenFgaError(409, 'Aborted', `transactional write failed due to conflict: attempted to write a tuple which already exists with a different condition: ${keyText(t)}`);
        }
      }
      const toDelete: Tuple[] = [];
      for (const t of deletes) {
        if (await stored(engine, t)) toDelete.push(t);
        else if (!ignoreMissing) throw invalid('write_failed_due_to_invalid_input', `cannot delete a tuple which does not exist: ${keyText(t)}: tuple to be written already existed or the tuple to be deleted did not exist`);
      }
      if (toWrite.length + toDelete.length > 0) await run('validation_error', () => engine.write(toWrite, toDelete));
      return {};
    },
    async Read(storeId, body) {
      const engine = await storeEngine(storeId);
      const key = obj(body.tuple_key);
      const pageSize = body.page_size === undefined || body.page_size === null ? undefined : Number(body.page_size);
      const page = await run('validation_error', () => engine.readTuples({
        user: str(key.user) || null, relation: str(key.relation) || null, object: str(key.object) || null,
        ...(pageSize !== undefined ? { page_size: pageSize } : {}), continuation_token: str(body.continuation_token) || null,
      }));
      return { tuples: page.tuples.map((t, i) => ({ key: toWire(t), ...timestamp(page.written_at?.[i]) })), continuation_token: page.continuation_token ?? '' };
    },
    async ReadChanges(storeId, q) {
      const engine = await storeEngine(storeId);
      const readChanges = engine.readChanges;
      if (!readChanges) throw new OpenFgaError(501, 'unimplemented', 'ReadChanges is not served with --fga-store=openfga; ask the OpenFGA server');
      const pageSize = q.page_size ? Number(q.page_size) : 50;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) throw invalid('page_size_invalid', 'page_size must be between 1 and 100');
      const type = q.type ?? '';
      let after = { revision: 0, index: 0 };
      if (q.continuation_token) {
        try {
          const t = JSON.parse(Buffer.from(q.continuation_token, 'base64url').toString('utf8')) as { r?: unknown; i?: unknown; t?: unknown };
          if (!Number.isSafeInteger(t.r) || !Number.isSafeInteger(t.i) || t.t !== type) throw new Error('bad token');
          after = { revision: t.r as number, index: t.i as number };
        } catch {
          throw invalid('invalid_continuation_token', 'Invalid continuation token');
        }
      }
      // as OpenFGA: start_time (RFC 3339) applies when no continuation_token is given; the token wins
      let since: number | undefined;
      if (q.start_time && !q.continuation_token) {
        since = Date.parse(q.start_time);
        if (!/^\d{4}-\d{2}-\d{2}T/.test(q.start_time) || Number.isNaN(since)) throw invalid('invalid_start_time', 'start_time must be an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z');
      }
      const page = await run('validation_error', () => readChanges({ ...(type ? { objectType: type } : {}), afterRevision: after.revision, afterIndex: after.index, limit: pageSize, ...(since !== undefined ? { since } : {}) }));
      // as OpenFGA: with nothing new, the same token comes back, so a poller keeps its place
      const token = page.cursor ? Buffer.from(JSON.stringify({ r: page.cursor.revision, i: page.cursor.index, t: type }), 'utf8').toString('base64url') : (q.continuation_token ?? '');
      return {
        changes: page.changes.map((c) => ({ tuple_key: toWire(c.tuple), operation: c.op === 'write' ? 'TUPLE_OPERATION_WRITE' : 'TUPLE_OPERATION_DELETE', ...timestamp(c.at) })),
        continuation_token: token,
      };
    },

    async Check(storeId, body) {
      const engine = await modelEngine(storeId, body.authorization_model_id);
      return { allowed: await checkOne(engine, body.tuple_key, body.contextual_tuples, body.context), resolution: '' };
    },
    async BatchCheck(storeId, body) {
      const engine = await modelEngine(storeId, body.authorization_model_id);
      const checks = Array.isArray(body.checks) ? body.checks.map(obj) : [];
      if (checks.length === 0) throw invalid('validation_error', 'checks must contain at least one item');
      if (checks.length > limits.maxChecksPerBatchCheck) {
        throw invalid('validation_error', `batchCheck received ${checks.length} checks, the maximum allowed is ${limits.maxChecksPerBatchCheck}`);
      }
      const ids = new Set<string>();
      for (const c of checks) {
        const id = str(c.correlation_id);
        if (id === '') throw invalid('validation_error', 'every check needs a correlation_id');
        if (ids.has(id)) throw invalid('validation_error', `duplicate correlation_id provided: ${id}`);
        ids.add(id);
      }
      const result: Record<string, Body> = {};
      // each check answers on its own: one refused input is that check's error, not the call's
      await Promise.all(checks.map(async (c) => {
        try {
          result[str(c.correlation_id)] = { allowed: await checkOne(engine, c.tuple_key, c.contextual_tuples, c.context) };
        } catch (err) {
          const e = err instanceof OpenFgaError ? err : fromEngineError(err, 'validation_error', storeId);
          result[str(c.correlation_id)] = { allowed: false, error: e.status === 400 ? { input_error: e.code, message: e.message } : { internal_error: e.code, message: e.message } };
        }
      }));
      return { result };
    },
    async Expand(storeId, body) {
      const engine = await modelEngine(storeId, body.authorization_model_id);
      const key = obj(body.tuple_key);
      const ctx = contextualOf(body.contextual_tuples);
      const { tree } = await run('invalid_expand_input', () => engine.expand({ relation: str(key.relation), object: str(key.object), ...(ctx.length > 0 ? { contextual_tuples: ctx } : {}) }));
      return { tree: JSON.parse(tree) as unknown };
    },
    async ListObjects(storeId, body) {
      const objects = await listObjects(storeId, body);
      return { objects: limits.listObjectsMaxResults > 0 ? objects.slice(0, limits.listObjectsMaxResults) : objects };
    },
    async StreamedListObjects(storeId, body) {
      return listObjects(storeId, body);
    },
    async WriteAssertions(storeId, modelId, body) {
      const engine = await storeEngine(storeId);
      const assertions = Array.isArray(body.assertions) ? body.assertions.map(obj) : [];
      if (assertions.length > MAX_ASSERTIONS) throw invalid('assertions_too_many_items', `assertions must contain at most ${MAX_ASSERTIONS} items`);
      const kept = assertions.map((a, i) => {
        const k = toTuple(a.tuple_key);
        if (!k.user || !k.relation || !/^[^:#\s]+:[^#\s]+$/.test(k.object)) throw invalid('validation_error', `assertion ${i}: tuple_key needs user, relation and an object in type:id form`);
        if (typeof a.expectation !== 'boolean') throw invalid('validation_error', `assertion ${i}: expectation must be true or false`);
        const contextual = contextualOf(a.contextual_tuples);
        return {
          tuple_key: { object: k.object, relation: k.relation, user: k.user }, expectation: a.expectation,
          ...(contextual.length > 0 ? { contextual_tuples: contextual.map(toWire) } : {}),
          ...(a.context != null && typeof a.context === 'object' ? { context: a.context } : {}),
        };
      });
      const write = engine.writeAssertions;
      if (!write) throw new OpenFgaError(501, 'unimplemented', 'assertions are not served with --fga-store=openfga; ask the OpenFGA server');
      await assertionsCall(storeId, modelId, () => write(modelId, JSON.stringify(kept)));
      return {};
    },
    async ReadAssertions(storeId, modelId) {
      const engine = await storeEngine(storeId);
      const read = engine.readAssertions;
      if (!read) throw new OpenFgaError(501, 'unimplemented', 'assertions are not served with --fga-store=openfga; ask the OpenFGA server');
      const text = await assertionsCall(storeId, modelId, () => read(modelId));
      return { authorization_model_id: modelId, assertions: JSON.parse(text) as unknown };
    },
    async ListUsers(storeId, body) {
      const engine = await modelEngine(storeId, body.authorization_model_id);
      const o = obj(body.object);
      const filters = Array.isArray(body.user_filters) ? body.user_filters.map(obj) : [];
      if (filters.length !== 1) throw invalid('validation_error', 'user_filters must contain exactly one filter');
      const f = filters[0]!;
      const userType = str(f.relation) ? `${str(f.type)}#${str(f.relation)}` : str(f.type);
      const ctx = contextualOf(body.contextual_tuples);
      const answer = await withinDeadline(limits.listDeadlineMs, run('validation_error', () => engine.listUsers({
        object: `${str(o.type)}:${str(o.id)}`, relation: str(body.relation), user_type: userType,
        ...(ctx.length > 0 ? { contextual_tuples: ctx } : {}), ...(body.context != null ? { context: body.context } : {}),
      })));
      const users = limits.listUsersMaxResults > 0 ? answer.users.slice(0, limits.listUsersMaxResults) : answer.users;
      return { users: users.map(userOf) };
    },
  };
}

/** A ListUsers user as OpenFGA's `User`: `{object}`, `{userset}` or `{wildcard}`. */
function userOf(u: string): Body {
  const hash = u.indexOf('#');
  const base = hash < 0 ? u : u.slice(0, hash);
  const colon = base.indexOf(':');
  const type = base.slice(0, colon);
  const id = base.slice(colon + 1);
  if (hash >= 0) return { userset: { type, id, relation: u.slice(hash + 1) } };
  if (id === '*') return { wildcard: { type } };
  return { object: { type, id } };
}
