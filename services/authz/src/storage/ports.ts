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

/** Revisions of change log a store keeps at least; a replica further behind reloads everything. */
export const CHANGE_RETENTION = 1000;

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
   * Every revision has at least one entry while retained (the last {@link CHANGE_RETENTION} at least), so a
   * caller detects a pruned range by a missing revision.
   */
  readChanges(afterRevision: number, uptoRevision: number): Promise<TupleChange[]>;
}

/** Tuple mutations. Every call is atomic and bumps the revision once. */
export interface TupleWriter {
  /**
   * Inserts `writes` (an existing tuple is a no-op) and removes `deletes` (a missing one is a no-op), all or nothing.
   * @returns the revision after the write
   */
  writeTuples(writes: TupleKey[], deletes: TupleKey[]): Promise<number>;
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
