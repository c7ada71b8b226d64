/** @module engine: the authorization engine's domain API (behaviour.md §7), transport-free. */
import { AppError } from '@gatehouse/errors';
import { monotonicFactory } from 'ulid';
import { Resolver, ResolverCache, ResolutionTooComplex, isResolutionError, type Visited } from './check.ts';
import { ConditionError, parseContext } from './condition.ts';
import { expand } from './expand.ts';
import { LIST_CAP, LIST_RESOLUTION_STEPS, listUsers, reachableFrom, verifiedObjects } from './list.ts';
import { reverseReadKeys } from './reach.ts';
import { parseDsl } from './model-dsl.ts';
import type { Tuple } from './object-ref.ts';
import { parseCheckSubject, splitObject, type UserRef } from './object-ref.ts';
import type { CheckInput, ParsedCheck } from './queries.ts';
import { checkBatchCount, listedPairs, parseCheck, requireModel, requireRelation, requireSubject } from './queries.ts';
import { SnapshotCache, addParsed, guard, typeSystemOf, type Snapshot } from './snapshot.ts';
import { PartialIndex } from './partial.ts';
import { TupleIndex, type TupleSource } from './tuple-index.ts';
import type { ParsedTuple, ReadQuery, TupleInput } from './tuple.ts';
import { encodeToken, parseReadQuery, parseTupleForm, validateDeleteBatch, validateWriteBatch } from './tuple.ts';
import { TypeSystem } from './type-system.ts';
import type { AuthzStore, WriteConflicts } from '../storage/ports.ts';

/** One check result (service-spec §2 PermissionResult). */
export interface CheckResult {
  relation: string;
  object: string;
  allowed: boolean;
}

/**
 * The engine's operations (behaviour.md §7). Every method throws only AppError: `invalid_argument` for bad
 * input (exact §7 messages), `failed_precondition` `no authorization model is installed` for queries and
 * writes before a model exists, `unavailable` when the store fails. Subjects are `type:id` (a bare id means
 * `user:<id>`); `check` and `listPermissions` also accept a userset `type:id#relation` subject.
 */
export interface Engine {
  /** Validates and appends a model version (ULID id), which becomes active. Returns the text as submitted. */
  writeModel(dsl: string): Promise<{ id: string; dsl: string }>;
  /** The active version; `{id: '', dsl: ''}` on an empty store. */
  getModel(): Promise<{ id: string; dsl: string }>;
  /**
   * Stored versions for OpenFGA's ReadAuthorizationModel(s): the one with `id` (null when none), or up to
   * `limit` newest first, older than `beforeId`. Absent on a backend that does not keep them.
   */
  readModels?(q: { id: string } | { beforeId: string | null; limit: number }): Promise<Array<{ id: string; dsl: string }>>;
  /** 1–100 tuples, each allowed by the active model; all or nothing; existing tuples are no-ops. */
  writeTuples(tuples: Tuple[]): Promise<void>;
  /** 1–100 tuples in `type:id` form (not checked against the model); missing tuples are no-ops. */
  deleteTuples(tuples: Tuple[]): Promise<void>;
  /**
   * Writes and deletes in one atomic revision (OpenFGA Write): up to 100 of each, writes checked against the
   * active model, deletes only by form; at least one tuple in all. Existing writes and missing deletes are no-ops
   * unless `conflicts` refuses them (OpenFGA Write without `on_duplicate` / `on_missing: ignore`): then nothing is
   * written and the call fails, decided atomically with the write (no read before it).
   * @throws TupleConflictError naming the first existing write or missing delete under `conflicts`
   */
  write(writes: Tuple[], deletes: Tuple[], conflicts?: WriteConflicts): Promise<void>;
  /**
   * The change log as OpenFGA's ReadChanges pages it: tuple writes and deletes after `afterRevision` (and
   * `afterIndex` entries of that revision), optionally of one object type, at most `limit`, oldest first.
   * Returns the cursor of the last entry answered (`null` when none). Only the retained log is answered
   * (the last 1,000 revisions at least). With `since` (milliseconds since the Unix epoch), entries written
   * before it are skipped (OpenFGA's `start_time`). Each change carries `at`, when it was written (ms; null
   * for entries from before the store recorded it). Absent on a backend without a change log of its own.
   */
  readChanges?(q: { objectType?: string; afterRevision: number; afterIndex: number; limit: number; since?: number }): Promise<{ changes: Array<{ op: 'write' | 'delete'; tuple: Tuple; at: number | null }>; cursor: { revision: number; index: number } | null }>;
  /**
   * Exact filters (`object` may be `type:`), `page_size` 1–100 (default 50), filter-bound continuation token,
   * `null` when done. `written_at`, when the backend records it, is each tuple's write time in milliseconds
   * since the Unix epoch (null where unknown), in the order of `tuples`.
   */
  readTuples(q: ReadQuery): Promise<{ tuples: Tuple[]; continuation_token: string | null; written_at?: Array<number | null> }>;
  /**
   * 1–100 checks, all evaluated, results in input order; `resolution too complex` or a condition that cannot
   * be evaluated fails the whole call. `options.context` is the call's condition context; a check's own
   * `context` overrides it key by key.
   */
  check(subject: string, checks: CheckInput[], options?: { context?: unknown }): Promise<CheckResult[]>;
  /**
   * Every (type, relation) matching the filter, sorted by type, relation, object; capped at 1000 with
   * `truncated`. Contextual tuples (at most 100) count as stored; `context` feeds conditions. With `any_first`
   * (OpenFGA ListObjects, which answers in no order and, past its cap, whichever objects it finds first), when one
   * type and relation are asked, the model has no conditions and the relation needs no check, the objects come
   * in the order the expansion reaches them and it stops at the cap: past it, any 1,000 of them.
   */
  listPermissions(
    subject: string,
    filter: { relation?: string | null; object_type?: string | null; contextual_tuples?: TupleInput[] | null; context?: unknown; any_first?: boolean },
  ): Promise<{ objects: string[]; permissions: Array<{ object: string; relation: string }>; truncated: boolean }>;
  /**
   * Users of `user_type` related to `object` by `relation`, sorted, capped at 1000: concrete `type:id` users
   * (and `type:*` when a wildcard grants access), or `type:id#relation` usersets for a userset filter
   * `type#relation`. Contextual tuples and `context` as in listPermissions.
   */
  listUsers(q: {
    object?: string | null;
    relation?: string | null;
    user_type?: string | null;
    contextual_tuples?: TupleInput[] | null;
    context?: unknown;
  }): Promise<{ users: string[]; truncated: boolean }>;
  /**
   * One level of the OpenFGA userset tree, `{root: {...}}` serialised as JSON; contextual tuples (at most
   * 100, each allowed by the model) count as stored.
   */
  expand(q: { relation?: string | null; object?: string | null; contextual_tuples?: TupleInput[] | null }): Promise<{ tree: string }>;
  /**
   * Replaces the assertions of model version `modelId` (OpenFGA WriteAssertions: a JSON array of
   * `{tuple_key, expectation, contextual_tuples?, context?}`, validated by the caller, kept as text).
   * Absent on a backend that keeps none. @throws AppError `not_found` `authorization model not found`
   */
  writeAssertions?(modelId: string, assertions: string): Promise<void>;
  /** The assertions of model version `modelId`, `[]` when none were written. @throws AppError `not_found` as writeAssertions */
  readAssertions?(modelId: string): Promise<string>;
  /** Deletes every model version; refused (`failed_precondition`) while any tuple exists. */
  reset(): Promise<void>;
  /** Deletes the tuples where `user:<userId>` is the user or the object; returns how many. */
  deleteUserTuples(userId: string): Promise<number>;
  /** Loads the in-memory snapshot now (call at startup so the first request does not pay for it). */
  warm(): Promise<void>;
  /**
   * Cache figures for metrics: snapshot revision and indexed tuples (0 before the first load), full loads,
   * change-log catch-ups; and, since start, the check calls answered (or refused) from the store while a
   * full load ran (`partial_checks`), the list_permissions, list_users and expand calls answered so
   * (`partial_lists`), the objects and users they fetched (`partial_fetches`), and the calls that needed
   * more than {@link PARTIAL_FETCH_LIMIT} fetches and waited for the load instead (`partial_waits`).
   */
  stats(): EngineStats;
}

/** The engine's cache figures (see {@link Engine.stats}); every count is since the process started. */
export interface EngineStats {
  revision: number;
  tuples: number;
  full_loads: number;
  catch_ups: number;
  partial_checks: number;
  partial_lists: number;
  partial_fetches: number;
  partial_waits: number;
}

/**
 * Objects (and users) one check, list or expand call may fetch from the store while a full load runs; a
 * call that needs more waits for the full snapshot instead of sending more queries (issue 22 §3).
 */
export const PARTIAL_FETCH_LIMIT = 1000;

/**
 * Reads while the full snapshot loads (issue 22 §3 for check, issue 38 §1 for list_permissions, list_users and
 * expand): a {@link PartialIndex} at the store's current revision, filled from the store as resolution reaches
 * objects and users, kept for the next calls while the revision stays (a write anywhere moves it: the index
 * is dropped and started again at the new revision, with that revision's model).
 */
function lazyReads(store: AuthzStore, cache: SnapshotCache) {
  let partial: PartialIndex | null = null;
  let starting: { revision: number; index: Promise<PartialIndex> } | null = null;
  const stats = { checks: 0, lists: 0, fetches: 0, waits: 0 };

  /** The partial index at `revision` (the store's current one, just read). @throws AppError `unavailable`, `internal` */
  async function at(revision: number): Promise<PartialIndex> {
    if (partial !== null && partial.revision === revision) return partial;
    if (starting === null || starting.revision !== revision) {
      const index = (async () => {
        const model = await guard(store.latestModel());
        const ts = model === null ? null : typeSystemOf(model, partial ?? cache.peek());
        const made = new PartialIndex(revision, model, ts);
        if (partial === null || partial.revision < revision) partial = made;
        return made;
      })();
      starting = { revision, index };
      index.finally(() => {
        if (starting?.index === index) starting = null;
      }).catch(() => undefined);
    }
    return starting.index;
  }

  /**
   * The answer of one call at `revision`, computed against the partial index in rounds: a round that
   * read only fetched objects and users answers (its value, or its error, is the snapshot path's at the
   * revisions read); a round that met anything missing is discarded (its error too: a missing object may be
   * the cause), the missing ones are fetched and the call is computed again. Null when it would need more
   * than {@link PARTIAL_FETCH_LIMIT} fetches: the caller then waits for the full snapshot.
   * @param kind which counter an answered call adds to (`partial_checks` or `partial_lists`)
   * @param compute the call's synchronous work over an index (validation included)
   * @throws what `compute` throws in a complete round; AppError `unavailable` when a fetch fails
   */
  async function answer<T>(revision: number, kind: 'checks' | 'lists', compute: (index: PartialIndex) => T): Promise<{ value: T } | null> {
    let waits = false;
    try {
      const index = await at(revision);
      let fetched = 0;
      for (;;) {
        index.beginRound();
        let value: T | undefined;
        try {
          value = compute(index);
        } catch (err) {
          if (!index.incomplete) throw err;
        }
        const missing = index.takeMissing();
        if (missing.length === 0) return { value: value as T };
        if (fetched + missing.length > PARTIAL_FETCH_LIMIT) {
          waits = true;
          return null;
        }
        fetched += missing.length;
        stats.fetches += await guard(index.fetch(store, missing));
      }
    } finally {
      // answered or refused here, or handed on to the full snapshot
      if (waits) stats.waits++;
      else stats[kind]++;
    }
  }

  return {
    at,
    answer,
    stats,
    /** Forgets the partial index (the full snapshot is current). */
    drop(): void {
      partial = null;
    },
  };
}

/**
 * The resolver of its own that a check with contextual tuples or a condition context gets (its context
 * overrides the call's key by key), or null for a plain check, which the subject's resolver answers.
 */
function ownResolver(ts: TypeSystem, base: TupleSource, s: UserRef, node: ParsedCheck, callContext: Record<string, unknown> | null): Resolver | null {
  if (node.contextual.length === 0 && node.context === null) return null;
  let ctx: TupleIndex | null = null;
  if (node.contextual.length > 0) {
    ctx = new TupleIndex();
    for (const p of node.contextual) addParsed(ctx, p);
  }
  const context = node.context === null ? callContext : { ...(callContext ?? {}), ...node.context };
  return new Resolver(ts, base, ctx, s, undefined, context);
}

/**
 * One resolution round of a check call over a partial index: every check in order with one resolver for
 * the subject (a fresh one: an earlier round's memo may hold answers from missing objects), and one per
 * check with contextual tuples or a context, as the snapshot path does. Returns the results when nothing
 * was missing; when something was, what it got is discarded (the round only gathers what to fetch). An
 * error met while nothing was missing yet is the snapshot path's error and is thrown.
 * @throws AppError `invalid_argument` (`resolution too complex`, condition errors)
 */
function resolveRound(ts: TypeSystem, index: PartialIndex, s: UserRef, parsed: ParsedCheck[], callContext: Record<string, unknown> | null): CheckResult[] {
  const shared = new Resolver(ts, index, null, s, undefined, callContext);
  const results: CheckResult[] = new Array(parsed.length);
  for (let i = 0; i < parsed.length; i++) {
    const node = parsed[i]!;
    const resolver = ownResolver(ts, index, s, node, callContext) ?? shared;
    try {
      results[i] = { relation: node.relation, object: node.object, allowed: resolver.answer(node.object, node.relation) };
    } catch (err) {
      if (!isResolutionError(err) || !index.incomplete) return tooComplex(err);
      // a missing object may be why it failed: fetch, then resolve again
      return results;
    }
  }
  return results;
}

/** How many parsed check subjects an engine keeps (oldest dropped first). */
const SUBJECT_CACHE_SIZE = 4096;

/**
 * `parseCheckSubject` with the answers remembered: the same few callers ask again and again, and a
 * subject's parse depends on its text alone. A refused text is not remembered (it throws every time).
 * The refs handed out are frozen: every call with that subject shares one.
 */
function checkSubjectParser(): (raw: string) => UserRef {
  const parsed = new Map<string, UserRef>();
  return (raw) => {
    let ref = parsed.get(raw);
    if (ref === undefined) {
      ref = Object.freeze(parseCheckSubject(raw));
      if (parsed.size >= SUBJECT_CACHE_SIZE) parsed.delete(parsed.keys().next().value!);
      parsed.set(raw, ref);
    }
    return ref;
  };
}

const tooComplex = (err: unknown): never => {
  if (err instanceof ResolutionTooComplex) throw new AppError('invalid_argument', 'resolution too complex', { cause: err });
  if (err instanceof ConditionError) throw new AppError('invalid_argument', err.message, { cause: err });
  throw err;
};

/** A request's condition context. @throws AppError `invalid_argument` `context must be a JSON object` */
function requestContext(raw: unknown): Record<string, unknown> | null {
  try {
    return parseContext(raw, 'context');
  } catch (err) {
    throw new AppError('invalid_argument', (err as Error).message);
  }
}

/** Validated contextual tuples of a list call (at most 100, each allowed by the model) as an index, or null. */
function contextualIndex(ts: TypeSystem, raw: unknown): TupleIndex | null {
  if (raw === undefined || raw === null || (Array.isArray(raw) && raw.length === 0)) return null;
  const parsed: readonly ParsedTuple[] = parseCheck(ts, { relation: '_', object: '_:_', contextual_tuples: raw as TupleInput[] }, true).contextual;
  const index = new TupleIndex();
  for (const p of parsed) addParsed(index, p);
  return index;
}

/**
 * Builds the engine over one store. Queries answer from an in-memory snapshot (model + tuple indexes)
 * that is compared with the store revision on every call and reloaded when another replica wrote;
 * graph resolution is synchronous, so a check costs no Promise per hop.
 */
export function createEngine(deps: { store: AuthzStore }): Engine {
  const { store } = deps;
  const cache = new SnapshotCache(store);
  const lazy = lazyReads(store, cache);
  const resolvers = new ResolverCache();
  const nextId = monotonicFactory();
  const subjectOf = checkSubjectParser();

  /**
   * The full snapshot when it is current or a catch-up gets there; while a full load runs, `partial`'s answer
   * over the partial index in rounds ({@link lazyReads}, counted under `kind`); when that needs too many
   * fetches, the snapshot once loaded. The caller answers from a snapshot it gets back.
   * behaviour.md §7.3 read-your-writes: the store's current state is at least as fresh as the caller must see.
   * @throws what `partial` throws in a complete round; AppError `unavailable` on storage failure
   */
  async function snapshotOr<T>(kind: 'checks' | 'lists', partial: (index: PartialIndex) => T): Promise<Snapshot | { value: T }> {
    const now = await cache.currentOrLoading();
    if (!('loading' in now)) return now;
    const answered = await lazy.answer(now.loading, kind, partial);
    return answered ?? cache.current();
  }

  /**
   * A list or expand call's answer: `compute` over the full snapshot, or over the partial index while a full
   * load runs ({@link snapshotOr}). `compute` validates against the model it is given and is synchronous.
   * @throws what `compute` throws; AppError `unavailable` on storage failure
   */
  async function read<T>(compute: (ts: TypeSystem | null, index: TupleSource) => T): Promise<T> {
    let snap = cache.currentIfKnown();
    if (snap === null) {
      const got = await snapshotOr('lists', (index) => compute(index.ts, index));
      if ('value' in got) return got.value;
      snap = got;
    }
    lazy.drop();
    return compute(snap.ts, snap.index);
  }

  /** {@link Engine.write}. @throws AppError as writeTuples and deleteTuples do */
  async function write(writes: Tuple[], deletes: Tuple[], conflicts?: WriteConflicts): Promise<void> {
    let added: ParsedTuple[] = [];
    // a call with no deletes validates its writes whatever their number (none is `at least one tuple is required`)
    if (writes.length > 0 || deletes.length === 0) {
      // validated against the model of the store's current revision: a full load running does not hold the write up
      let ts = cache.currentIfKnown()?.ts;
      if (ts === undefined) {
        const now = await cache.currentOrLoading();
        ts = 'loading' in now ? (await lazy.at(now.loading)).ts : now.ts;
      }
      added = validateWriteBatch(requireModel(ts), writes);
    }
    const removed = deletes.length > 0 ? validateDeleteBatch(deletes) : [];
    const revision = await guard(store.writeTuples(added.map((p) => p.tuple), removed.map((p) => p.tuple), conflicts));
    cache.applyDelta(revision, added, removed);
  }

  /** @throws AppError `not_found` `authorization model not found` when no version has this id */
  async function knownModel(modelId: string): Promise<void> {
    if ((await guard(store.readModel(modelId))) === null) throw new AppError('not_found', 'authorization model not found');
  }

  return {
    /** behaviour.md §7.1 Versions. @throws AppError `invalid_argument` (see parseDsl) */
    async writeModel(dsl) {
      new TypeSystem(parseDsl(dsl));
      const id = nextId();
      await guard(store.appendModel({ id, dsl }));
      return { id, dsl };
    },

    /**
     * behaviour.md §7.1: the active version, or `{id: '', dsl: ''}` on an empty store. From the snapshot when it
     * is known current without I/O (a model change reloads it, so its model is the active one), else read from
     * the store: never a snapshot load.
     */
    async getModel() {
      const snap = cache.currentIfKnown();
      if (snap) return snap.model ? { id: snap.model.id, dsl: snap.model.dsl } : { id: '', dsl: '' };
      const model = await guard(store.latestModel());
      return model ? { id: model.id, dsl: model.dsl } : { id: '', dsl: '' };
    },

    async writeTuples(tuples) {
      await write(tuples, []);
    },

    async deleteTuples(tuples) {
      const parsed = validateDeleteBatch(tuples);
      const revision = await guard(store.writeTuples([], parsed.map((p) => p.tuple)));
      cache.applyDelta(revision, [], parsed);
    },

    write,

    async readChanges(q) {
      const upto = await guard(store.revision());
      // a cursor inside a revision reads that revision again and skips what was answered
      const entries = await guard(store.readChanges(q.afterIndex > 0 ? q.afterRevision - 1 : q.afterRevision, upto));
      const changes: Array<{ op: 'write' | 'delete'; tuple: Tuple; at: number | null }> = [];
      let cursor: { revision: number; index: number } | null = null;
      let index = 0;
      let revision = -1;
      for (const e of entries) {
        if (e.revision !== revision) {
          revision = e.revision;
          index = 0;
        }
        index++;
        if (e.revision === q.afterRevision && index <= q.afterIndex) continue;
        if ((e.op !== 'write' && e.op !== 'delete') || e.tuple === null) continue;
        if (q.objectType !== undefined && splitObject(e.tuple.object)?.type !== q.objectType) continue;
        if (q.since !== undefined && (e.at ?? 0) < q.since) continue;
        if (changes.length === q.limit) break;
        const t = e.tuple;
        changes.push({
          op: e.op, at: e.at ?? null,
          tuple: t.condition ? { user: t.user, relation: t.relation, object: t.object, condition: t.condition } : { user: t.user, relation: t.relation, object: t.object },
        });
        cursor = { revision: e.revision, index };
      }
      return { changes, cursor };
    },

    async readTuples(q) {
      const { filter, pageSize, afterSeq, binding } = parseReadQuery(q ?? {});
      const page = await guard(store.readPage(filter, afterSeq, pageSize));
      const last = page.tuples[page.tuples.length - 1];
      return {
        tuples: page.tuples.map((t) => (t.condition ? { user: t.user, relation: t.relation, object: t.object, condition: t.condition } : { user: t.user, relation: t.relation, object: t.object })),
        continuation_token: page.more && last ? encodeToken(binding, last.seq) : null,
        written_at: page.tuples.map((t) => t.writtenAt ?? null),
      };
    },

    /** behaviour.md §7.3 check_permissions: 1–100 checks, all evaluated, results in input order. */
    async check(subject, checks, options) {
      const s = subjectOf(subject);
      const inputs = checkBatchCount(checks);
      const callContext = requestContext(options?.context);
      let snap = cache.currentIfKnown();
      if (snap === null) {
        // parsed once per call: every round of one call reads the same partial index, so the same model
        let parsedChecks: ParsedCheck[] | null = null;
        const got = await snapshotOr('checks', (index) => {
          const ts = requireModel(index.ts);
          requireSubject(ts, s);
          parsedChecks ??= inputs.map((c) => parseCheck(ts, c));
          return resolveRound(ts, index, s, parsedChecks, callContext);
        });
        if ('value' in got) return got.value;
        snap = got;
      }
      lazy.drop();
      const ts = requireModel(snap.ts);
      requireSubject(ts, s);
      // answers under a request context depend on it: such calls get a resolver of their own, never the shared memo
      const shared = callContext === null ? resolvers.get(snap, snap.revision, ts, snap.index, s) : new Resolver(ts, snap.index, null, s, undefined, callContext);
      // Every check is validated before any is resolved (a refusal names the first bad check, and
      // nothing is half answered). A check on an object this subject's resolver has visited, with a
      // relation its type defines and no contextual tuples, is valid as it stands: it came from an
      // earlier validated check or a stored tuple. When the resolver remembers its answer, that is the
      // answer (a lookup has no side effect, so a refusal later in the batch loses nothing); otherwise
      // its node is kept for the answer below.
      const n = inputs.length;
      const results: CheckResult[] = new Array(n);
      const known: Array<Visited | undefined> = new Array(n);
      const parsed: Array<ParsedCheck | undefined> = new Array(n);
      for (let i = 0; i < n; i++) {
        const c = inputs[i]!;
        const plain = (c?.contextual_tuples == null || (Array.isArray(c.contextual_tuples) && c.contextual_tuples.length === 0)) && c?.context == null;
        if (plain && typeof c?.object === 'string' && typeof c.relation === 'string') {
          const allowed = shared.answered(c.object, c.relation);
          if (allowed !== undefined) {
            results[i] = { relation: c.relation, object: c.object, allowed };
            continue;
          }
          const v = shared.visited(c.object);
          if (v !== undefined && v.rels?.get(c.relation) !== undefined) {
            known[i] = v;
            continue;
          }
        }
        parsed[i] = parseCheck(ts, c);
      }
      try {
        for (let i = 0; i < n; i++) {
          if (results[i] !== undefined) continue;
          const v = known[i];
          if (v !== undefined) {
            const relation = inputs[i]!.relation!;
            results[i] = { relation, object: v.object, allowed: shared.checkVisited(v, relation) };
            continue;
          }
          const node = parsed[i]!;
          const resolver = ownResolver(ts, snap.index, s, node, callContext) ?? shared;
          results[i] = { relation: node.relation, object: node.object, allowed: resolver.answer(node.object, node.relation) };
        }
        return results;
      } catch (err) {
        if (callContext === null) resolvers.drop(shared);
        return tooComplex(err);
      }
    },

    /** behaviour.md §7.3 list_permissions: every matching (type, relation), sorted, capped at 1000. */
    async listPermissions(subject, filter) {
      const s = subjectOf(subject);
      const relation = filter?.relation?.trim() || undefined;
      const objectType = filter?.object_type?.trim() || undefined;
      return read((model, index) => {
        const ts = requireModel(model);
        requireSubject(ts, s);
        const pairs = listedPairs(ts, objectType, relation);
        const context = requestContext(filter?.context);
        const ctx = contextualIndex(ts, filter?.contextual_tuples);
        // conditions are evaluated on the way, as OpenFGA's reverse expansion does: one it cannot evaluate on a
        // relation the expansion toward a requested type#relation reads fails the call
        const conditionErrors = new Map<string, ConditionError>();
        // one past the cap still tells the answer is truncated
        const only = pairs.length === 1 ? pairs[0]! : null;
        const stop = filter?.any_first === true && only !== null && ts.conditions.size === 0 && ts.relation(only[0], only[1])?.needsVerify === false
          ? { type: only[0], relation: only[1], at: LIST_CAP + 1 } : null;
        // OpenFGA answers a concrete subject with its pipeline (every branch read), a userset or `type:*` one with its
        // older reverse expansion (pruned branches), and each reads, and fails on, different tuples
        const pruned = s.kind !== 'object';
        const found = reachableFrom(ts, index, s, ctx, { context, errors: conditionErrors, pruned }, stop);
        // one resolver verifies every candidate, so it gets a larger step budget than a single check call
        const resolver = new Resolver(ts, index, ctx, s, LIST_RESOLUTION_STEPS, context);
        // a concrete subject's candidates: OpenFGA's pipeline computes them from what it read and runs no check, so
        // a condition error the check meets off the subject's paths is no error there
        resolver.conditionErrorsAsFalse = !pruned;
        const permissions: Array<{ object: string; relation: string }> = [];
        let truncated = false;
        try {
          outer: for (const [type, rel] of pairs) {
            if (conditionErrors.size > 0) for (const key of reverseReadKeys(ts, type, rel, pruned)) { const err = conditionErrors.get(key); if (err) throw err; }
            // without conditions no candidate's check can fail the call: verify only up to one past the cap
            const limit = ts.conditions.size === 0 ? LIST_CAP + 1 - permissions.length : Infinity;
            for (const object of verifiedObjects(ts, resolver, found, type, rel, stop === null, limit)) {
              if (permissions.length === LIST_CAP) {
                truncated = true;
                break outer;
              }
              permissions.push({ object, relation: rel });
            }
          }
        } catch (err) {
          return tooComplex(err);
        }
        return { objects: [...new Set(permissions.map((p) => p.object))], permissions, truncated };
      });
    },

    /** behaviour.md §7.3 fga/list_users. */
    async listUsers(q) {
      const object = q?.object?.trim() ?? '';
      const relation = q?.relation?.trim() ?? '';
      const userType = q?.user_type?.trim() ?? '';
      if (!object || !relation || !userType) throw new AppError('invalid_argument', 'object, relation and user_type are required');
      const obj = splitObject(object);
      if (!obj) throw new AppError('invalid_argument', `object must be in type:id form, got "${object}"`);
      return read((model, index) => {
        const ts = requireModel(model);
        requireRelation(ts, obj.type, relation);
        const hash = userType.indexOf('#');
        const filter = hash < 0 ? { type: userType, relation: '' } : { type: userType.slice(0, hash), relation: userType.slice(hash + 1) };
        if (!ts.types.has(filter.type)) throw new AppError('invalid_argument', `type "${filter.type}" is not defined`);
        if (filter.relation !== '') requireRelation(ts, filter.type, filter.relation);
        const context = requestContext(q?.context);
        const ctx = contextualIndex(ts, q?.contextual_tuples);
        try {
          return listUsers(ts, index, object, relation, filter, ctx, context);
        } catch (err) {
          return tooComplex(err);
        }
      });
    },

    /** behaviour.md §7.3 fga/expand: the OpenFGA userset tree as a JSON string. */
    async expand(q) {
      const object = q?.object?.trim() ?? '';
      const relation = q?.relation?.trim() ?? '';
      if (!object || !relation) throw new AppError('invalid_argument', 'relation and object are required');
      const obj = splitObject(object);
      if (!obj) throw new AppError('invalid_argument', `object must be in type:id form, got "${object}"`);
      return read((model, index) => {
        const ts = requireModel(model);
        requireRelation(ts, obj.type, relation);
        const def = ts.relation(obj.type, relation);
        const ctx = contextualIndex(ts, q?.contextual_tuples);
        return { tree: JSON.stringify(expand(ts, index, object, relation, def!.rewrite, ctx)) };
      });
    },

    async readModels(q) {
      if ('id' in q) {
        const m = await guard(store.readModel(q.id));
        return m ? [m] : [];
      }
      return guard(store.listModels(q.beforeId, q.limit));
    },

    async writeAssertions(modelId, assertions) {
      await knownModel(modelId);
      await guard(store.writeAssertions(modelId, assertions));
    },

    async readAssertions(modelId) {
      await knownModel(modelId);
      return (await guard(store.readAssertions(modelId))) ?? '[]';
    },

    /** behaviour.md §7.1 Reset. @throws AppError `failed_precondition` while any tuple exists */
    async reset() {
      if (!(await guard(store.resetIfEmpty()))) {
        throw new AppError('failed_precondition', 'remove all relationship tuples before resetting the authorization model');
      }
    },

    async warm() {
      await cache.current();
    },

    stats() {
      const snap = cache.peek();
      return {
        revision: snap?.revision ?? 0, tuples: snap?.index.size ?? 0, full_loads: cache.stats.fullLoads, catch_ups: cache.stats.catchUps,
        partial_checks: lazy.stats.checks, partial_lists: lazy.stats.lists, partial_fetches: lazy.stats.fetches, partial_waits: lazy.stats.waits,
      };
    },

    /** behaviour.md §7.1 User deletion. @returns how many tuples were deleted */
    async deleteUserTuples(userId) {
      const id = typeof userId === 'string' ? userId.trim() : '';
      if (!id) throw new AppError('invalid_argument', 'user id is required');
      // a change-log catch-up first, so the delta applies to the snapshot; a full load running is not waited for
      // (it replays this deletion from the change log before anyone reads it)
      if (cache.currentIfKnown() === null) await cache.currentOrLoading();
      const { deleted, revision } = await guard(store.deleteUserTuples(`user:${id}`));
      const parsed = deleted.flatMap((t) => {
        try {
          return [parseTupleForm(t)];
        } catch {
          return [];
        }
      });
      cache.applyDelta(revision, [], parsed);
      return deleted.length;
    },
  };
}
