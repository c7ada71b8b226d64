/**
 * @module authz/openfga-api/stores
 * The stores the OpenFGA API answers for (OpenFGA's CreateStore / GetStore / ListStores / UpdateStore / DeleteStore,
 * issue 36 §1): Gatehouse's own store ({@link GATEHOUSE_STORE_ID}, the engine `/v1` uses, which cannot be
 * deleted or renamed) and the stores created through the API, each with an engine of its own over its own tuples,
 * models, change log and assertions. Gatehouse's store keeps its tables and its engine: nothing on its
 * path reads the catalog. Also the engines of pinned model versions (a query naming an older
 * `authorization_model_id`).
 */
import { decodeTime } from 'ulid';
import { createEngine, type Engine } from '../domain/index.ts';
import type { AuthzStore, StoreCatalog, StoreInfo, StoredModel } from '../storage/ports.ts';

/**
 * The id of Gatehouse's store in OpenFGA's API: a fixed ULID, the same on every replica and every
 * installation, so an SDK or CLI is configured with it once (`FGA_STORE_ID`).
 */
export const GATEHOUSE_STORE_ID = '01JDQ7GATEHSE0000000000000';
/** The store's name as ListStores and GetStore answer it. */
export const GATEHOUSE_STORE_NAME = 'gatehouse';

/** Engines of created stores kept in memory at once (least recently used first out; one comes back with a full load). */
export const MAX_STORE_ENGINES = 64;
/** Engines of pinned model versions kept at once (each holds an index of the store's tuples as that version allows them). */
export const MAX_PINNED_ENGINES = 8;

/** A store as the OpenFGA API describes it. */
export type StoreEntry = StoreInfo;

/** The stores of the OpenFGA API (see the module). */
export interface StoreDirectory {
  /** True when stores can be created (a SQL or memory engine store; not over an OpenFGA server). */
  readonly canCreate: boolean;
  /** Gatehouse's store first, then the created ones in creation order; `afterId` / `limit` page them. */
  list(q: { name?: string; afterId: string | null; limit: number }): Promise<StoreEntry[]>;
  /** The store with this id, or null. */
  get(id: string): Promise<StoreEntry | null>;
  /** Creates a store (a new ULID id). @throws Error when {@link canCreate} is false */
  create(name: string): Promise<StoreEntry>;
  /**
   * Renames a created store (OpenFGA UpdateStore). Gatehouse's own store keeps its name
   * ({@link GATEHOUSE_STORE_NAME}): the caller refuses renaming it.
   * @returns the store as renamed, or null when there is no such created store
   */
  rename(id: string, name: string): Promise<StoreEntry | null>;
  /** Deletes a created store and everything in it. @returns false when there is no such store (Gatehouse's store is never deleted: the caller refuses it) */
  delete(id: string): Promise<boolean>;
  /** The engine of store `id`, or null when there is no such store. */
  engine(id: string): Promise<Engine | null>;
  /**
   * An engine of store `id` that answers with model version `model` (one of the store's) whatever the
   * active version is; null when pinning is not possible (over an OpenFGA server).
   */
  pinned(id: string, model: StoredModel): Engine | null;
}

/** A map that forgets its least recently used entry past `max`. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  dropWhere(test: (key: string) => boolean): void {
    for (const key of [...this.map.keys()]) if (test(key)) this.map.delete(key);
  }
}

/** `store` as a store whose active model is `model` (every other read and write passes through). */
function pinnedView(store: AuthzStore, model: StoredModel): AuthzStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'latestModel') return async () => model;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/**
 * The directory over Gatehouse's `engine` (and its `store`, for pinned versions; null over an OpenFGA
 * server) and the `catalog` of created stores (null: Gatehouse's store only). `newId` makes store ids (ULIDs).
 */
export function createStoreDirectory(o: { engine: Engine; store: AuthzStore | null; catalog: StoreCatalog | null; newId: () => string }): StoreDirectory {
  const created = new Date(decodeTime(GATEHOUSE_STORE_ID)).getTime();
  // the store exists since the ULID's time: a stable creation time on every replica
  const own: StoreEntry = { id: GATEHOUSE_STORE_ID, name: GATEHOUSE_STORE_NAME, createdAt: created, updatedAt: created };
  const engines = new Lru<{ engine: Engine; store: AuthzStore }>(MAX_STORE_ENGINES);
  const pins = new Lru<Engine>(MAX_PINNED_ENGINES);
  const catalog = o.catalog;
  const storeOf = (id: string): { engine: Engine; store: AuthzStore } => {
    let e = engines.get(id);
    if (!e) {
      const store = catalog!.open(id);
      e = { engine: createEngine({ store }), store };
      engines.set(id, e);
    }
    return e;
  };
  return {
    canCreate: catalog !== null,
    async list({ name, afterId, limit }) {
      const ownFits = (name === undefined || name === own.name) && (afterId === null || own.id > afterId);
      const rest = catalog ? await catalog.list({ ...(name !== undefined ? { name } : {}), afterId, limit }) : [];
      // ULIDs sort by creation time, and Gatehouse's predates every created store
      return (ownFits ? [{ ...own }, ...rest] : rest).slice(0, limit);
    },
    async get(id) {
      if (id === GATEHOUSE_STORE_ID) return { ...own };
      return catalog ? catalog.get(id) : null;
    },
    async create(name) {
      if (!catalog) throw new Error('stores cannot be created over this engine store');
      return catalog.create({ id: o.newId(), name });
    },
    async rename(id, name) {
      if (!catalog || id === GATEHOUSE_STORE_ID) return null;
      return catalog.rename(id, name);
    },
    async delete(id) {
      if (!catalog || id === GATEHOUSE_STORE_ID) return false;
      const gone = await catalog.delete(id);
      engines.dropWhere((k) => k === id);
      pins.dropWhere((k) => k.startsWith(`${id}/`));
      return gone;
    },
    async engine(id) {
      if (id === GATEHOUSE_STORE_ID) return o.engine;
      if (!catalog || (await catalog.get(id)) === null) {
        // deleted (perhaps through another replica): its engine goes too
        engines.dropWhere((k) => k === id);
        return null;
      }
      return storeOf(id).engine;
    },
    pinned(id, model) {
      const base = id === GATEHOUSE_STORE_ID ? o.store : catalog ? storeOf(id).store : null;
      if (!base) return null;
      const key = `${id}/${model.id}`;
      let e = pins.get(key);
      if (!e) {
        e = createEngine({ store: pinnedView(base, model) });
        pins.set(key, e);
      }
      return e;
    },
  };
}
