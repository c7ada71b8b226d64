/** @module snapshot: the engine's in-memory copy of the active model and its tuples, kept current by store revision. */
import { AppError } from '@gatehouse/errors';
import { parseDsl } from './model-dsl.ts';
import { tupleMismatch } from './tuple.ts';
import type { ParsedTuple } from './tuple.ts';
import { TupleIndex } from './tuple-index.ts';
import { TypeSystem } from './type-system.ts';
import type { UserRef } from './object-ref.ts';
import { CHANGE_LOG_CEILING, TupleConflictError } from '../storage/ports.ts';
import type { AuthzStore, StoredModel, TupleChange, TupleKey } from '../storage/ports.ts';

/** One consistent view: the active model, its type system and the tuples it allows, at `revision`. */
export interface Snapshot {
  revision: number;
  model: StoredModel | null;
  ts: TypeSystem | null;
  index: TupleIndex;
  /** cache of the model-fit decision per tuple shape (type, relation, user type) */
  fits: Map<string, boolean>;
}

/** Maps a storage failure to `unavailable` (behaviour.md §7.3: never a partial result). */
export async function guard<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof AppError || err instanceof TupleConflictError) throw err;
    throw new AppError('unavailable', 'authorization store is unavailable', { cause: err, reason: 'fga_store_error' });
  }
}

/** Tuples read per page, and indexed between two yields to the event loop, during a full load. */
const LOAD_SLICE = 10_000;

/** Counters for observability and tests. */
export interface SnapshotStats {
  fullLoads: number;
  catchUps: number;
}

/**
 * Keeps a snapshot current. `current()` compares the store revision with the cached one on every call
 * (one cheap query). When another replica wrote, it replays the store's change log since the cached
 * revision; a model change, a reset or a gap in the log means a full reload. `applyDelta` patches the
 * snapshot after this process's own writes. All mutation happens between awaits, so a request that is
 * resolving (synchronously) always sees one consistent snapshot.
 */
export class SnapshotCache {
  private readonly store: AuthzStore;
  private snap: Snapshot | null = null;
  private refreshing: Refresh | null = null;
  readonly stats: SnapshotStats = { fullLoads: 0, catchUps: 0 };

  constructor(store: AuthzStore) {
    this.store = store;
  }

  /** The cached snapshot without consulting the store (null before the first load). */
  peek(): Snapshot | null {
    return this.snap;
  }

  /**
   * The cached snapshot when it is at (or past) the store's current revision and the store knows that
   * revision without I/O (`knownRevision`); else null, and `current()` must ask the store. The same
   * answer `current()` gives, without its promise round trips.
   */
  currentIfKnown(): Snapshot | null {
    const snap = this.snap;
    if (snap === null) return null;
    const revision = this.store.knownRevision?.() ?? null;
    return revision !== null && snap.revision >= revision ? snap : null;
  }

  /** The snapshot at (or past) the store's current revision. @throws AppError `unavailable` on storage failure */
  async current(): Promise<Snapshot> {
    const revision = await guard(this.store.revision());
    for (;;) {
      const snap = this.snap;
      if (snap && snap.revision >= revision) return snap;
      await this.refreshTo(revision).done;
    }
  }

  /**
   * {@link current}, unless getting there takes a full load (the first load, a model change, a reset or a
   * change-log gap): then `{loading: revision}` at once, with the store's current revision, and the load
   * goes on (started here when none ran). A catch-up from the change log is awaited (it reads at most
   * {@link CHANGE_LOG_CEILING} revisions of changes). Lets check answer from the store while the snapshot is built.
   * @throws AppError `unavailable` on storage failure
   */
  async currentOrLoading(): Promise<Snapshot | { loading: number }> {
    const revision = await guard(this.store.revision());
    for (;;) {
      const snap = this.snap;
      if (snap && snap.revision >= revision) return snap;
      const run = this.refreshTo(revision);
      if (run.loading || await Promise.race([run.done.then(() => false), run.loadStarted])) return { loading: revision };
    }
  }

  /** The running refresh, or a new one towards `target`. Its failure reaches whoever awaits `done`, and no one else. */
  private refreshTo(target: number): Refresh {
    if (this.refreshing) return this.refreshing;
    let started!: (value: true) => void;
    const run: Refresh = { done: Promise.resolve(), loading: false, loadStarted: new Promise<true>((resolve) => (started = resolve)) };
    run.done = this.refresh(target, () => {
      run.loading = true;
      started(true);
    }).finally(() => {
      this.refreshing = null;
    });
    // a load started for a check that then answered from the store has no one awaiting it: its failure is
    // reported to the next caller (which starts another), not as an unhandled rejection
    run.done.catch(() => undefined);
    this.refreshing = run;
    return run;
  }

  /**
   * Applies this process's own write (which moved the store to `revision`) when the snapshot was exactly one
   * revision behind and no refresh is running; otherwise the next `current()` catches up from the change log.
   */
  applyDelta(revision: number, adds: ParsedTuple[], removes: ParsedTuple[]): void {
    const snap = this.snap;
    if (this.refreshing || !snap || snap.revision !== revision - 1) return;
    for (const p of removes) snap.index.remove(p.tuple.object, p.tuple.relation, p.tuple.user);
    if (snap.ts) {
      for (const p of adds) if (tupleMismatch(snap.ts, p) === null) addParsed(snap.index, p);
    }
    snap.revision = revision;
  }

  private async refresh(target: number, fullLoad: () => void): Promise<void> {
    const snap = this.snap;
    if (snap && await this.catchUp(snap, target)) {
      this.stats.catchUps++;
      return;
    }
    fullLoad();
    let loaded = await this.load(target, snap);
    // The pages were read while writes may have landed: bring the new snapshot to one store revision
    // (replaying the changes since `target`) before anyone reads it; a model change meanwhile loads again.
    for (;;) {
      const now = await guard(this.store.revision());
      if (now <= loaded.revision || await this.catchUp(loaded, now)) break;
      loaded = await this.load(now, loaded);
    }
    this.snap = loaded;
    this.stats.fullLoads++;
  }

  /** Replays the change log from `snap.revision` to `target` into `snap`; false when only a full load can get there. */
  private async catchUp(snap: Snapshot, target: number): Promise<boolean> {
    if (!snap.ts || target - snap.revision > CHANGE_LOG_CEILING) return false;
    const changes = await guard(this.store.readChanges(snap.revision, target));
    if (!replayable(changes, snap.revision, target)) return false;
    for (const c of changes) {
      if (!c.tuple) continue;
      if (c.op === 'write') indexStored(snap.index, snap.ts, snap.fits, c.tuple);
      else snap.index.remove(c.tuple.object, c.tuple.relation, c.tuple.user);
    }
    snap.revision = target;
    return true;
  }

  private async load(revision: number, previous: Snapshot | null): Promise<Snapshot> {
    const model = await guard(this.store.latestModel());
    const index = new TupleIndex();
    const fits = new Map<string, boolean>();
    if (!model) return { revision, model: null, ts: null, index, fits };
    const ts = typeSystemOf(model, previous);
    // Read in pages by seq, so the rows in flight stay a page (not the whole table: the peak RSS it left
    // behind was most of the snapshot's footprint), and other requests run between pages. A write that
    // lands meanwhile may or may not be in the pages read; the change log replay from `revision` then
    // applies it again, and adds and removes are idempotent.
    let after = 0;
    for (;;) {
      const page = await guard(this.store.readPage({}, after, LOAD_SLICE));
      for (const t of page.tuples) indexStored(index, ts, fits, t);
      if (!page.more || page.tuples.length === 0) break;
      after = page.tuples[page.tuples.length - 1]!.seq;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { revision, model, ts, index, fits };
  }
}

/** A refresh in progress: `done` settles when it ends; `loading` once it has turned out to need a full load. */
interface Refresh {
  done: Promise<void>;
  loading: boolean;
  /** resolves (true) when the full load starts; never when a catch-up was enough */
  loadStarted: Promise<true>;
}

/**
 * The type system of a stored model, reused from `previous` when that holds the same model version.
 * @throws AppError `internal` (`fga_stored_model_invalid`) when the stored text no longer parses
 */
export function typeSystemOf(model: StoredModel, previous: { model: StoredModel | null; ts: TypeSystem | null } | null): TypeSystem {
  if (previous?.model?.id === model.id && previous.ts) return previous.ts;
  try {
    return new TypeSystem(parseDsl(model.dsl));
  } catch (err) {
    throw new AppError('internal', 'internal error', { cause: err, reason: 'fga_stored_model_invalid' });
  }
}

/** True when `changes` covers every revision in (from, to] and needs no full reload. */
function replayable(changes: TupleChange[], from: number, to: number): boolean {
  const seen = new Set<number>();
  for (const c of changes) {
    if (c.op === 'model' || c.op === 'reset') return false;
    seen.add(c.revision);
  }
  return seen.size === to - from;
}

/**
 * Adds a stored tuple when the model allows it. behaviour.md §7.1: tuples the active model does not allow are
 * kept in the store but ignored by evaluation. Stored rows are canonical, so they are split by position, and
 * the model-fit decision is cached per tuple shape.
 */
export function indexStored(index: TupleIndex, ts: TypeSystem, fits: Map<string, boolean>, t: TupleKey): void {
  const colon = t.object.indexOf(':');
  if (colon <= 0) return;
  const objectType = t.object.slice(0, colon);
  const hash = t.user.indexOf('#');
  const userObject = hash >= 0 ? t.user.slice(0, hash) : t.user;
  const userColon = userObject.indexOf(':');
  if (userColon <= 0) return;
  const userType = userObject.slice(0, userColon);
  const userRelation = hash >= 0 ? t.user.slice(hash + 1) : '';
  const kind: UserRef['kind'] = hash >= 0 ? 'userset' : userObject.endsWith(':*') ? 'wildcard' : 'object';
  const condition = t.condition ?? null;
  const conditionName = condition?.name ?? '';
  const shape = `${objectType}\u0000${t.relation}\u0000${kind}\u0000${userType}\u0000${userRelation}\u0000${conditionName}`;
  let ok = fits.get(shape);
  if (ok === undefined) {
    const def = ts.relation(objectType, t.relation);
    const ref: UserRef = { kind, type: userType, id: '', relation: userRelation, key: t.user };
    ok = def !== undefined && ts.allowsUser(def, ref, conditionName) && (kind !== 'userset' || ts.relation(userType, userRelation) !== undefined)
      && (conditionName === '' || ts.conditions.has(conditionName));
    fits.set(shape, ok);
  }
  if (ok) index.add(t.object, objectType, t.relation, t.user, hash >= 0 ? { object: userObject, relation: userRelation } : null, condition);
}

/** Adds a validated tuple to an index. */
export function addParsed(index: TupleIndex, p: ParsedTuple): void {
  const u = p.user;
  index.add(p.tuple.object, p.objectType, p.tuple.relation, p.tuple.user, u.kind === 'userset' ? { object: `${u.type}:${u.id}`, relation: u.relation } : null, p.condition);
}
