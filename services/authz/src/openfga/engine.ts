/**
 * @module authz/openfga/engine
 * The `Engine` (behaviour.md §7) over an OpenFGA server (`--fga-store=openfga`, issue 21 §4): models,
 * tuples, checks (BatchCheck), list_permissions (ListObjects per type and relation), list_users,
 * expand, reset and user deletion go to the OpenFGA store through `@openfga/sdk`. Input is validated
 * by the embedded engine's own validators against the active model first, so refusals carry the same
 * `{code, message}` as the embedded engine; answers keep the same shapes, order and caps.
 */
import { AppError } from '@gatehouse/errors';
import type { OpenFgaClient, TupleKey } from '@openfga/sdk';
import type { CheckResult, Engine } from '../domain/engine.ts';
import { TupleConflictError } from '../storage/ports.ts';
import { parseDsl } from '../domain/model-dsl.ts';
import { parseCheckSubject, splitObject, type Tuple } from '../domain/object-ref.ts';
import { checkBatchCount, listedPairs, parseCheck, requireModel, requireRelation, requireSubject } from '../domain/queries.ts';
import { LIST_CAP } from '../domain/list.ts';
import { parseReadQuery, validateDeleteBatch, validateWriteBatch, type ParsedTuple, type TupleInput } from '../domain/tuple.ts';
import { parseContext } from '../domain/condition.ts';
import { TypeSystem } from '../domain/type-system.ts';
import type { UsersetTreeNode } from '../domain/expand.ts';
import { checkItemError, connectOpenFga, fga, openFgaReady, type OpenFgaTarget } from './client.ts';
import { appendModel, ModelCache, resetMarker, type ActiveModel } from './models.ts';
import { readPage } from './read.ts';

/** Tuples per OpenFGA Write call (OpenFGA's default `--max-tuples-per-write`). */
const WRITE_CHUNK = 100;
/** ListObjects calls in flight for one list_permissions. */
const LIST_CONCURRENCY = 8;

/** A domain tuple as an OpenFGA tuple key, its condition (name and context) included. */
const keyOf = (t: Tuple): TupleKey => ({
  user: t.user, relation: t.relation, object: t.object,
  ...(t.condition ? { condition: { name: t.condition.name, ...(t.condition.context ? { context: t.condition.context } : {}) } } : {}),
});

/** A request's condition context (a JSON object or absent). @throws AppError `invalid_argument` */
function requestContext(raw: unknown): Record<string, unknown> | null {
  try {
    return parseContext(raw, 'context');
  } catch (err) {
    throw new AppError('invalid_argument', (err as Error).message);
  }
}

/** The contextual tuples of a list call, validated like the embedded engine's, as OpenFGA keys (undefined when none). */
function listContextual(ts: TypeSystem, raw: TupleInput[] | null | undefined): TupleKey[] | undefined {
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return undefined;
  return parseCheck(ts, { relation: '_', object: '_:_', contextual_tuples: raw }, true).contextual.map((p) => keyOf(p.tuple));
}

/** The optional parts of an OpenFGA query: contextual tuples and condition context. */
function extras(contextual: TupleKey[] | undefined, context: Record<string, unknown> | null): { contextualTuples?: TupleKey[]; context?: object } {
  return { ...(contextual ? { contextualTuples: contextual } : {}), ...(context ? { context } : {}) };
}

/** Distinct tuples of a batch, first occurrence kept (OpenFGA refuses a write naming one tuple twice). */
function distinct(parsed: ParsedTuple[]): TupleKey[] {
  const seen = new Map<string, TupleKey>();
  for (const p of parsed) if (!seen.has(`${p.tuple.user} ${p.tuple.relation} ${p.tuple.object}`)) seen.set(`${p.tuple.user} ${p.tuple.relation} ${p.tuple.object}`, keyOf(p.tuple));
  return [...seen.values()];
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
async function mapLimit<I, O>(items: I[], limit: number, work: (item: I) => Promise<O>): Promise<O[]> {
  const out: O[] = new Array(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** OpenFGA's expand tree with users and tuple-to-userset targets sorted, as the embedded engine returns them. */
function sortTree(node: UsersetTreeNode): UsersetTreeNode {
  const leaf = node.leaf as Record<string, unknown> | undefined;
  if (leaf && 'users' in leaf) {
    return { name: node.name, leaf: { users: { users: [...((leaf.users as { users?: string[] }).users ?? [])].sort() } } };
  }
  if (leaf && 'tupleToUserset' in leaf) {
    const ttu = leaf.tupleToUserset as { tupleset: string; computed?: Array<{ userset: string }> };
    const computed = [...(ttu.computed ?? [])].sort((a, b) => (a.userset < b.userset ? -1 : a.userset > b.userset ? 1 : 0));
    return { name: node.name, leaf: { tupleToUserset: { tupleset: ttu.tupleset, computed } } };
  }
  if (leaf) return { name: node.name, leaf: node.leaf! };
  if (node.union) return { name: node.name, union: { nodes: node.union.nodes.map(sortTree) } };
  if (node.intersection) return { name: node.name, intersection: { nodes: node.intersection.nodes.map(sortTree) } };
  if (node.difference) return { name: node.name, difference: { base: sortTree(node.difference.base), subtract: sortTree(node.difference.subtract) } };
  return node;
}

/** The engine over OpenFGA, plus its readiness probe. */
export interface OpenFgaEngine extends Engine {
  /**
   * Resolves when the OpenFGA server answers for the store now (`/readyz`; connects first if needed).
   * @throws Error whose message is the cause (`connect ECONNREFUSED 127.0.0.1:8080`, …)
   */
  ready(): Promise<void>;
}

/**
 * Builds the engine over an OpenFGA store. The connection (store lookup or creation) is made by
 * `warm()`, which `buildAuthz` awaits before serving; any call before it connects first.
 * @throws (from warm) AppError `unavailable` when the server or the configured store is not there
 */
export function createOpenFgaEngine(target: OpenFgaTarget): OpenFgaEngine {
  let client: OpenFgaClient | null = null;
  let connecting: Promise<OpenFgaClient> | null = null;
  const connect = async (): Promise<OpenFgaClient> => {
    if (client) return client;
    connecting ??= connectOpenFga(target).then((c) => (client = c)).finally(() => { connecting = null; });
    return connecting;
  };
  const models = new ModelCache(() => client!);
  const activeModel = async (): Promise<ActiveModel | null> => {
    await connect();
    return models.active();
  };
  const requireActive = async (): Promise<ActiveModel> => {
    const m = await activeModel();
    requireModel(m?.ts ?? null);
    return m!;
  };
  const opts = (m: ActiveModel): { authorizationModelId: string } => ({ authorizationModelId: m.id });

  const writeChunks = async (keys: TupleKey[], kind: 'writes' | 'deletes', m?: ActiveModel): Promise<void> => {
    const c = await connect();
    for (let i = 0; i < keys.length; i += WRITE_CHUNK) {
      const chunk = keys.slice(i, i + WRITE_CHUNK);
      await fga('Write', c.write({ [kind]: chunk }, {
        ...(m ? opts(m) : {}),
        conflict: kind === 'writes' ? { onDuplicateWrites: 'ignore' as never } : { onMissingDeletes: 'ignore' as never },
      }));
    }
  };

  return {
    /** behaviour.md §7.1 Versions: validated like the embedded engine, then appended to the OpenFGA store. */
    async writeModel(dsl) {
      const json = parseDsl(dsl);
      new TypeSystem(json);
      return { id: await appendModel(await connect(), json, dsl), dsl };
    },

    async getModel() {
      const m = await activeModel();
      return m ? { id: m.id, dsl: m.dsl } : { id: '', dsl: '' };
    },

    async writeTuples(tuples) {
      const m = await requireActive();
      const parsed = validateWriteBatch(m.ts, tuples);
      await writeChunks(distinct(parsed), 'writes', m);
    },

    async deleteTuples(tuples) {
      const parsed = validateDeleteBatch(tuples);
      await writeChunks(distinct(parsed), 'deletes');
    },

    /**
     * OpenFGA Write: one call to the server with both sides (atomic there); existing writes and missing deletes
     * ignored, or refused by the server under `conflicts` (its `write_failed_due_to_invalid_input` becomes
     * TupleConflictError).
     */
    async write(writes, deletes, conflicts) {
      const added = writes.length > 0 || deletes.length === 0 ? validateWriteBatch((await requireActive()).ts, writes) : [];
      const removed = deletes.length > 0 ? validateDeleteBatch(deletes) : [];
      const c = await connect();
      try {
        await fga('Write', c.write({ writes: distinct(added), deletes: distinct(removed) }, {
          conflict: { onDuplicateWrites: (conflicts?.existing ?? 'ignore') as never, onMissingDeletes: (conflicts?.missing ?? 'ignore') as never },
        }));
      } catch (err) {
        throw conflictOf(err, writes, deletes) ?? err;
      }
    },

    async readTuples(q) {
      // the token is this backend's own (an OpenFGA page token inside), so parse the rest without it
      const query = parseReadQuery({ ...(q ?? {}), continuation_token: null });
      return readPage(await connect(), query, q?.continuation_token || null);
    },

    /** behaviour.md §7.3 check_permissions through one OpenFGA BatchCheck (the SDK splits it into server-sized batches). */
    async check(subject, checks, options) {
      const s = parseCheckSubject(subject);
      const inputs = checkBatchCount(checks);
      const callContext = requestContext(options?.context);
      const m = await requireActive();
      requireSubject(m.ts, s);
      const parsed = inputs.map((c) => parseCheck(m.ts, c));
      const c = await connect();
      const res = await fga('BatchCheck', c.batchCheck({
        checks: parsed.map((p, i) => ({
          user: s.key, relation: p.relation, object: p.object, correlationId: String(i),
          ...(p.contextual.length > 0 ? { contextualTuples: { tuple_keys: p.contextual.map((t) => keyOf(t.tuple)) } } : {}),
          ...(p.context !== null || callContext !== null ? { context: { ...(callContext ?? {}), ...(p.context ?? {}) } } : {}),
        })),
      }, opts(m)));
      const results: CheckResult[] = parsed.map((p) => ({ relation: p.relation, object: p.object, allowed: false }));
      // a resolution error anywhere fails the whole call, as in the embedded engine
      const errors = res.result.filter((r) => r.error);
      const fatal = errors.find((r) => checkItemError(r.error!).message === 'resolution too complex') ?? errors[0];
      if (fatal) throw checkItemError(fatal.error!);
      for (const r of res.result) results[Number(r.correlationId)]!.allowed = r.allowed;
      return results;
    },

    /** behaviour.md §7.3 list_permissions: one StreamedListObjects per (type, relation), sorted, capped at 1000. */
    async listPermissions(subject, filter) {
      const s = parseCheckSubject(subject);
      const relation = filter?.relation?.trim() || undefined;
      const objectType = filter?.object_type?.trim() || undefined;
      const m = await requireActive();
      const ts = m.ts;
      requireSubject(ts, s);
      const pairs = listedPairs(ts, objectType, relation);
      const more = extras(listContextual(ts, filter?.contextual_tuples), requestContext(filter?.context));
      const c = await connect();
      // StreamedListObjects: every object, not the first `--listObjects-max-results` in no order, so the
      // 1000 entries kept are the first 1000 in sort order, as the embedded engine keeps them
      // A refusal on the stream carries no readable message: the plain call then answers with it.
      const found = await mapLimit(pairs, LIST_CONCURRENCY, async ([type, rel]) => {
        const body = { user: s.key, relation: rel, type, ...more };
        try {
          const objects: string[] = [];
          for await (const item of c.streamedListObjects(body, opts(m))) objects.push(item.object);
          return objects.sort();
        } catch {
          return (await fga('ListObjects', c.listObjects(body, opts(m)))).objects.sort();
        }
      });
      const permissions: Array<{ object: string; relation: string }> = [];
      let truncated = false;
      outer: for (let i = 0; i < pairs.length; i++) {
        for (const object of found[i]!) {
          if (permissions.length === LIST_CAP) {
            truncated = true;
            break outer;
          }
          permissions.push({ object, relation: pairs[i]![1] });
        }
      }
      return { objects: [...new Set(permissions.map((p) => p.object))], permissions, truncated };
    },

    /** behaviour.md §7.3 fga/list_users: OpenFGA ListUsers, concrete users and wildcards of `user_type`, sorted. */
    async listUsers(q) {
      const object = q?.object?.trim() ?? '';
      const relation = q?.relation?.trim() ?? '';
      const userType = q?.user_type?.trim() ?? '';
      if (!object || !relation || !userType) throw new AppError('invalid_argument', 'object, relation and user_type are required');
      const obj = splitObject(object);
      if (!obj) throw new AppError('invalid_argument', `object must be in type:id form, got "${object}"`);
      const m = await requireActive();
      requireRelation(m.ts, obj.type, relation);
      const hash = userType.indexOf('#');
      const filter = hash < 0 ? { type: userType } : { type: userType.slice(0, hash), relation: userType.slice(hash + 1) };
      if (!m.ts.types.has(filter.type)) throw new AppError('invalid_argument', `type "${filter.type}" is not defined`);
      if (filter.relation !== undefined) requireRelation(m.ts, filter.type, filter.relation);
      const more = extras(listContextual(m.ts, q?.contextual_tuples), requestContext(q?.context));
      const c = await connect();
      const res = await fga('ListUsers', c.listUsers({ object: { type: obj.type, id: obj.id }, relation, user_filters: [filter], ...more }, opts(m)));
      const users = new Set<string>();
      for (const u of res.users ?? []) {
        if (u.object) users.add(`${u.object.type}:${u.object.id}`);
        else if (u.wildcard) users.add(`${u.wildcard.type}:*`);
        else if (u.userset) users.add(`${u.userset.type}:${u.userset.id}#${u.userset.relation}`);
      }
      const sorted = [...users].sort();
      return { users: sorted.slice(0, LIST_CAP), truncated: sorted.length > LIST_CAP };
    },

    /** behaviour.md §7.3 fga/expand: OpenFGA Expand, leaves sorted. */
    async expand(q) {
      const object = q?.object?.trim() ?? '';
      const relation = q?.relation?.trim() ?? '';
      if (!object || !relation) throw new AppError('invalid_argument', 'relation and object are required');
      const obj = splitObject(object);
      if (!obj) throw new AppError('invalid_argument', `object must be in type:id form, got "${object}"`);
      const m = await requireActive();
      requireRelation(m.ts, obj.type, relation);
      const contextual = listContextual(m.ts, q?.contextual_tuples);
      const c = await connect();
      const res = await fga('Expand', c.expand({ relation, object, ...(contextual ? { contextualTuples: contextual } : {}) }, opts(m)));
      const root = res.tree?.root as unknown as UsersetTreeNode;
      return { tree: JSON.stringify({ root: sortTree(root) }) };
    },

    /** behaviour.md §7.1 Reset: refused while any tuple exists; appends the marker model every replica reads as "no model". */
    async reset() {
      const c = await connect();
      const any = await fga('Read', c.read({}, { pageSize: 1 }));
      if ((any.tuples ?? []).length > 0) {
        throw new AppError('failed_precondition', 'remove all relationship tuples before resetting the authorization model');
      }
      if ((await models.active()) !== null) await fga('WriteAuthorizationModel', c.writeAuthorizationModel(resetMarker()));
    },

    /** behaviour.md §7.1 User deletion: the tuples naming `user:<id>` as user (on any type of the model) or as object. */
    async deleteUserTuples(userId) {
      const id = typeof userId === 'string' ? userId.trim() : '';
      if (!id) throw new AppError('invalid_argument', 'user id is required');
      const user = `user:${id}`;
      const c = await connect();
      const m = await models.active();
      const victims = new Map<string, TupleKey>();
      const collect = async (filter: { user?: string; object: string }): Promise<void> => {
        let token: string | undefined;
        do {
          const page = await fga('Read', c.read(filter, { pageSize: 100, ...(token ? { continuationToken: token } : {}) }));
          for (const t of page.tuples ?? []) {
            const k = t.key;
            victims.set(`${k.user} ${k.relation} ${k.object}`, { user: k.user, relation: k.relation, object: k.object });
          }
          token = page.continuation_token || undefined;
        } while (token);
      };
      await collect({ object: user });
      for (const type of m ? m.ts.types.keys() : []) await collect({ user, object: `${type}:` });
      await writeChunks([...victims.values()], 'deletes');
      return victims.size;
    },

    async warm() {
      await connect();
    },

    async ready() {
      let c: OpenFgaClient;
      try {
        c = await connect();
      } catch (err) {
        const cause = (err as AppError).cause;
        throw new Error(cause instanceof Error ? cause.message : (err as Error).message);
      }
      await openFgaReady(c);
    },

    /** The snapshot figures of the embedded engine do not apply: the OpenFGA server holds the tuples. */
    stats() {
      return { revision: 0, tuples: 0, full_loads: 0, catch_ups: 0, partial_checks: 0, partial_lists: 0, partial_fetches: 0, partial_waits: 0 };
    },
  };
}

/**
 * The OpenFGA server's refusal of an existing write or a missing delete (`write_failed_due_to_invalid_input`)
 * as a TupleConflictError naming the tuple its message names (else the call's first write or delete), or null.
 */
function conflictOf(err: unknown, writes: Tuple[], deletes: Tuple[]): TupleConflictError | null {
  const cause = (err as { cause?: { apiErrorCode?: unknown; apiErrorMessage?: unknown } } | null)?.cause;
  if (cause?.apiErrorCode !== 'write_failed_due_to_invalid_input') return null;
  const message = String(cause.apiErrorMessage ?? '');
  const kind = /cannot delete/.test(message) ? 'missing' : 'existing';
  const m = /user: '([^']*)', relation: '([^']*)', object: '([^']*)'/.exec(message);
  const named = m ? { user: m[1]!, relation: m[2]!, object: m[3]! } : (kind === 'missing' ? deletes[0] : writes[0]);
  return named ? new TupleConflictError(kind, { user: named.user, relation: named.relation, object: named.object }) : null;
}
