/**
 * @module partial: the tuples check, list_permissions, list_users and expand read while the full snapshot
 * loads (issue 22 §3, issue 38 §1), fetched from the store per object (and per user, for the reverse
 * expansion) as resolution reaches them.
 */
import type { Bucket, ObjectNode, TupleSource, UserRelations } from './tuple-index.ts';
import { EMPTY_BUCKET, TupleIndex } from './tuple-index.ts';
import { indexStored } from './snapshot.ts';
import type { TypeSystem } from './type-system.ts';
import type { AuthzStore, StoredModel, TupleFilter } from '../storage/ports.ts';
import { splitObjectKey } from '../storage/ports.ts';

/** Rows read per query when fetching one object's or one user's tuples. */
const FETCH_PAGE = 1000;

/** Fetches one check call runs at the same time (a round's missing objects are read in parallel, this many at once). */
const FETCH_CONCURRENCY = 8;

/**
 * A partial index at one store revision: the model of that revision and the complete stored tuples of
 * the objects (and users) fetched so far, each indexed under the same model-fit rule as the full load
 * (`indexStored`: tuples the model does not allow are ignored, conditions kept). Objects are kept apart
 * from users so that an object's buckets hold its tuples in store order, as the full snapshot does.
 *
 * Resolution reads it through {@link TupleSource}: `node` of a fetched object is exact; `node` of one not
 * fetched answers "no tuples" and records the object as missing, as `byUser` does for users. A check
 * round that recorded nothing missing read only complete objects, so its answer (or its error) is the
 * one the full snapshot gives at the revisions read; otherwise the engine fetches what was missing and
 * resolves again with a fresh resolver. The rounds are synchronous, so the missing sets belong to the
 * one round running.
 */
export class PartialIndex implements TupleSource {
  /** the store revision this index was started at */
  readonly revision: number;
  /** the active model at `revision` (null: none is installed) */
  readonly model: StoredModel | null;
  readonly ts: TypeSystem | null;
  private readonly objects = new TupleIndex();
  private readonly users = new TupleIndex();
  private readonly fits = new Map<string, boolean>();
  private readonly fetchedObjects = new Set<string>();
  private readonly fetchedUsers = new Set<string>();
  private readonly pending = new Map<string, Promise<void>>();
  private missingObjects = new Set<string>();
  private missingUsers = new Set<string>();

  constructor(revision: number, model: StoredModel | null, ts: TypeSystem | null) {
    this.revision = revision;
    this.model = model;
    this.ts = ts;
  }

  /** The object's node when it was fetched (undefined: it has no tuples the model allows); else undefined, and it is recorded as missing. */
  node(object: string): ObjectNode | undefined {
    if (this.fetchedObjects.has(object)) return this.objects.node(object);
    this.missingObjects.add(object);
    return undefined;
  }

  /** The users of `object#relation` when the object was fetched; else the empty bucket, and the object is recorded as missing. */
  bucket(object: string, relation: string): Bucket {
    return this.node(object)?.rels.get(relation) ?? EMPTY_BUCKET;
  }

  /** The user's reverse relations when it was fetched; else undefined, and it is recorded as missing. */
  byUser(user: string): UserRelations | undefined {
    if (this.fetchedUsers.has(user)) return this.users.byUser(user);
    this.missingUsers.add(user);
    return undefined;
  }

  /** Whether the running round has asked for anything not fetched yet. */
  get incomplete(): boolean {
    return this.missingObjects.size > 0 || this.missingUsers.size > 0;
  }

  /** Starts a resolution round: nothing missing yet. */
  beginRound(): void {
    this.missingObjects = new Set();
    this.missingUsers = new Set();
  }

  /** What the round found missing, as fetch keys (`o` + object, `u` + user); the round's record is cleared. */
  takeMissing(): string[] {
    const keys = [...this.missingObjects].map((o) => `o${o}`).concat([...this.missingUsers].map((u) => `u${u}`));
    this.beginRound();
    return keys;
  }

  /**
   * Fetches every stored tuple of the given objects and users (keys from {@link takeMissing}),
   * {@link FETCH_CONCURRENCY} queries at a time; a key another call is fetching is awaited, not read again.
   * @returns how many keys this call read from the store
   * @throws whatever the store throws (the engine maps it to `unavailable`)
   */
  async fetch(store: AuthzStore, keys: readonly string[]): Promise<number> {
    let next = 0;
    let read = 0;
    const worker = async (): Promise<void> => {
      while (next < keys.length) {
        const key = keys[next++]!;
        let work = this.pending.get(key);
        if (work === undefined) {
          if (key[0] === 'o' ? this.fetchedObjects.has(key.slice(1)) : this.fetchedUsers.has(key.slice(1))) continue;
          work = this.fetchKey(store, key).finally(() => this.pending.delete(key));
          this.pending.set(key, work);
          read++;
        }
        await work;
      }
    };
    await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, keys.length) }, worker));
    return read;
  }

  private async fetchKey(store: AuthzStore, key: string): Promise<void> {
    const subject = key.slice(1);
    const byObject = key[0] === 'o';
    let filter: TupleFilter;
    if (byObject) {
      const { type, id } = splitObjectKey(subject);
      filter = { objectType: type, objectId: id };
    } else filter = { user: subject };
    const target = byObject ? this.objects : this.users;
    let after = 0;
    for (;;) {
      const page = await store.readPage(filter, after, FETCH_PAGE);
      if (this.ts !== null) for (const t of page.tuples) indexStored(target, this.ts, this.fits, t);
      if (!page.more || page.tuples.length === 0) break;
      after = page.tuples[page.tuples.length - 1]!.seq;
    }
    (byObject ? this.fetchedObjects : this.fetchedUsers).add(subject);
  }
}
