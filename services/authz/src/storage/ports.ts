/** @module authz/storage/ports: the storage interfaces the authorization engine needs (STYLE §2; OpenFGA storage.OpenFGADatastore, reduced). */

/**
 * A relationship tuple as stored: `user` (`type:id`, `type:*` or `type:id#relation`), `relation`, `object`
 * (`type:id`), and an optional condition (OpenFGA schema 1.1). The key is the three strings: a condition is
 * not part of it, so writing a key that exists is a no-op whatever its condition.
 */
export interface TupleKey {
  user: string;
  relation: string;
  object: string;
  /** the condition's name and its context (a JSON object, or null); absent or null for none */
  condition?: { name: string; context: Record<string, unknown> | null } | null;
}

/** A stored tuple with its insertion sequence number (the stable read order and the cursor). */
export interface StoredTuple extends TupleKey {
  seq: number;
  /**
   * When the tuple was written, in milliseconds since the Unix epoch (OpenFGA's `Tuple.timestamp`); null
   * for a tuple a SQL store kept from before it recorded write times. Only `readPage` answers it.
   */
  writtenAt?: number | null;
}

/** Exact-match filters of a paginated read; `objectType` alone matches every object of the type. */
export interface TupleFilter {
  user?: string;
  relation?: string;
  objectType?: string;
  objectId?: string;
}

/** An authorization model version: ULID id and the DSL text as submitted. */
export interface StoredModel {
  id: string;
  dsl: string;
}

/**
 * One entry of the change log: what a revision did. A tuple write or delete carries its tuple; `model` and
 * `reset` mark revisions that need a full reload; `none` marks a revision that changed nothing.
 */
export interface TupleChange {
  revision: number;
  op: 'write' | 'delete' | 'model' | 'reset' | 'none';
  tuple: TupleKey | null;
  /** when the revision was written, in milliseconds since the Unix epoch (OpenFGA's `TupleChange.timestamp`); null for entries from before the store recorded it */
  at?: number | null;
}

/**
 * Revisions of change log a store keeps at least (the safety floor of compaction, issue 32 §3): a replica
 * that has not reported yet (it is starting, or between two reports) and a ReadChanges reader find at
 * least the last 1000 revisions. The memory store (one process, no other replica) keeps exactly these.
 */
export const CHANGE_RETENTION = 1000;

/**
 * Revisions of change log a SQL store keeps at most, whatever a replica reported: a replica further behind
 * (stalled, or partitioned from the database yet still reporting) reloads its snapshot instead, and the
 * table stays bounded. Also the longest catch-up a snapshot replays before it prefers a full load.
 */
export const CHANGE_LOG_CEILING = 100_000;

/** What one compaction did: the highest revision deleted from the change log (0: none yet) and the entries deleted. */
export interface Compaction {
  horizon: number;
  deleted: number;
}

/**
 * The replicas of a shared store and the compaction of its change log (issue 32 §3: "compacted once no
 * replica needs it"). Each replica reports the revision its snapshot has applied; compaction deletes the
 * entries of revisions at or below the lowest revision a live replica reported, keeping at least the last
 * `floor` revisions and at most the last `ceiling`. A replica further behind than what is kept (it stopped
 * reporting, or fell past the ceiling) finds a gap and reloads its snapshot.
 */
export interface ChangeLogCompactor {
  /** Records (upserts) that replica `replicaId` has applied the change log up to `revision`, at `now` (ms since the epoch). */
  reportReplica(replicaId: string, revision: number, now: number): Promise<void>;
  /** Forgets a replica (one that stops): its revision holds nothing back any more. */
  forgetReplica(replicaId: string): Promise<void>;
  /**
   * Deletes what no live replica needs. A replica is live when it reported at or after `liveSince` (ms);
   * reports older than `forgetBefore` (ms) are deleted too.
   * @returns the horizon (every entry of a revision `<= horizon` is gone) and how many entries were deleted
   */
  compactChanges(opts: { liveSince: number; forgetBefore: number; floor: number; ceiling: number }): Promise<Compaction>;
}

/** Read-only tuple queries. Code that only checks permissions receives this, never a writer. */
export interface TupleReader {
  /** The store revision: a number that increases on every write (tuples, models, reset). Replicas compare it to refresh caches. */
  revision(): Promise<number>;
  /**
   * The revision `revision()` would answer, when the store knows it without I/O: the memory store
   * always; the SQLite store while no other process has committed and no own write ran since its last
   * read. Null when only a query can tell. Lets a check skip a promise round trip per call.
   */
  knownRevision?(): number | null;
  /** Tuples matching `filter` with `seq > afterSeq`, in `seq` order, at most `limit`; `more` when another page exists. */
  readPage(filter: TupleFilter, afterSeq: number, limit: number): Promise<{ tuples: StoredTuple[]; more: boolean }>;
  /** Tuples of one `object#relation` (forward lookup, as Check needs). */
  readByObject(objectType: string, objectId: string, relation: string): Promise<TupleKey[]>;
  /** Tuples whose user is exactly `user`, with `relation`, on objects of `objectType` (reverse lookup, as ListObjects needs). */
  readByUser(user: string, relation: string, objectType: string): Promise<TupleKey[]>;
  /** Every tuple, for loading the engine's in-memory index. */
  readAll(): Promise<TupleKey[]>;
  /** True when at least one tuple exists. */
  hasTuples(): Promise<boolean>;
  /**
   * The change log entries of revisions `afterRevision < r <= uptoRevision`, in the order they were applied.
   * Every revision has at least one entry while retained (the last {@link CHANGE_RETENTION} at least; on a
   * SQL store, whatever a live replica still needs, see {@link ChangeLogCompactor}), so a caller detects a
   * pruned range by a missing revision.
   */
  readChanges(afterRevision: number, uptoRevision: number): Promise<TupleChange[]>;
}

/**
 * How a tuple write treats an existing write or a missing delete: ignored (the default, the `/v1` API's
 * no-op), or refused (OpenFGA Write without `on_duplicate` / `on_missing: ignore`).
 */
export interface WriteConflicts {
  /** refuse the call when a tuple of `writes` already exists (same object, relation and user) */
  existing?: 'error' | 'ignore';
  /** refuse the call when a tuple of `deletes` does not exist */
  missing?: 'error' | 'ignore';
}

/**
 * A write refused by {@link WriteConflicts}: nothing was written. `tuple` is the first tuple found to exist
 * (`kind` `existing`) or to be missing (`kind` `missing`).
 */
export class TupleConflictError extends Error {
  readonly kind: 'existing' | 'missing';
  readonly tuple: TupleKey;
  constructor(kind: 'existing' | 'missing', tuple: TupleKey) {
    super(kind === 'existing' ? 'tuple to be written already exists' : 'tuple to be deleted does not exist');
    this.name = 'TupleConflictError';
    this.kind = kind;
    this.tuple = tuple;
  }
}

/** Tuple mutations. Every call is atomic and bumps the revision once. */
export interface TupleWriter {
  /**
   * Inserts `writes` and removes `deletes`, all or nothing. An existing write and a missing delete are
   * no-ops unless `conflicts` says to refuse them: then the whole call fails with {@link TupleConflictError}
   * and changes nothing. The check runs inside the write's transaction, after the revision lock that orders
   * writers, so of two concurrent identical strict writes exactly one succeeds.
   * @returns the revision after the write
   * @throws TupleConflictError under `conflicts`
   */
  writeTuples(writes: TupleKey[], deletes: TupleKey[], conflicts?: WriteConflicts): Promise<number>;
  /**
   * Deletes every tuple whose user is exactly `user` or whose object is `user` (behaviour.md §7.1 user deletion).
   * @returns the deleted tuples and the revision after the delete
   */
  deleteUserTuples(user: string): Promise<{ deleted: TupleKey[]; revision: number }>;
}

/** Authorization model versions: append-only; the newest is active. */
export interface ModelStore {
  /** Appends a version (its id must sort after every earlier id). @returns the revision after the write */
  appendModel(model: StoredModel): Promise<number>;
  /** The newest version, or null on an empty store. */
  latestModel(): Promise<StoredModel | null>;
  /** The version with this id, or null (OpenFGA ReadAuthorizationModel). */
  readModel(id: string): Promise<StoredModel | null>;
  /** Up to `limit` versions, newest first, older than `beforeId` when given (OpenFGA ReadAuthorizationModels pages). */
  listModels(beforeId: string | null, limit: number): Promise<StoredModel[]>;
  /** Deletes every model version when no tuple exists, atomically. @returns false (and changes nothing) when tuples exist */
  resetIfEmpty(): Promise<boolean>;
}

/**
 * The assertions kept with a model version (OpenFGA WriteAssertions / ReadAssertions): test data of the
 * model, never read by a query. Not part of the revision: writing them changes no answer.
 */
export interface AssertionStore {
  /** Replaces the assertions of model `modelId` with `assertions` (a JSON array, as text). */
  writeAssertions(modelId: string, assertions: string): Promise<void>;
  /** The assertions of model `modelId` (JSON array text), or null when none were written. */
  readAssertions(modelId: string): Promise<string | null>;
}

/** Everything the engine needs from one store. */
export type AuthzStore = TupleReader & TupleWriter & ModelStore & AssertionStore;

/** `type:id` split at the first colon. */
export function splitObjectKey(object: string): { type: string; id: string } {
  const colon = object.indexOf(':');
  return { type: object.slice(0, colon), id: object.slice(colon + 1) };
}

/** One store of the OpenFGA API other than Gatehouse's own (OpenFGA `Store`); times in ms since the Unix epoch. */
export interface StoreInfo {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * The OpenFGA API's other stores (OpenFGA CreateStore / GetStore / ListStores / UpdateStore / DeleteStore): each has
 * its own tuples, model versions, revision, change log and assertions, read and written through the
 * {@link AuthzStore} `open` answers. Gatehouse's own store is not in the catalog.
 */
export interface StoreCatalog {
  /** Adds an empty store (its id a new ULID, chosen by the caller). */
  create(store: { id: string; name: string }): Promise<StoreInfo>;
  /** The store with this id, or null. */
  get(id: string): Promise<StoreInfo | null>;
  /** Up to `limit` stores in id order (creation order), after `afterId` when given, of one name when given. */
  list(q: { name?: string; afterId: string | null; limit: number }): Promise<StoreInfo[]>;
  /** Renames the store (OpenFGA UpdateStore), its `updatedAt` now. @returns the store as renamed, or null when there is no such store */
  rename(id: string, name: string): Promise<StoreInfo | null>;
  /** Deletes the store and everything in it, atomically. @returns false when there was no such store */
  delete(id: string): Promise<boolean>;
  /** The data of store `id` (whether it exists is the caller's check). */
  open(id: string): AuthzStore;
}
