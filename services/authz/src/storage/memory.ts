/** @module memory: in-memory AuthzStore with forward, reverse and per-type indexes (passes ports.suite.ts). */
import type { AuthzStore, StoreCatalog, StoreInfo, StoredModel, StoredTuple, TupleChange, TupleFilter, TupleKey } from './ports.ts';
import { CHANGE_RETENTION, TupleConflictError, splitObjectKey } from './ports.ts';

const keyOf = (t: TupleKey): string => `${t.object}\u0000${t.relation}\u0000${t.user}`;
// a context is a JSON object: copied through JSON, so its arrays and objects are this realm's (structuredClone
// makes them in Node's main realm, which a CEL list check under a VM context, as in the tests, does not accept)
const copy = (t: TupleKey): TupleKey =>
  t.condition
    ? { user: t.user, relation: t.relation, object: t.object, condition: { name: t.condition.name, context: t.condition.context === null ? null : JSON.parse(JSON.stringify(t.condition.context)) as Record<string, unknown> } }
    : { user: t.user, relation: t.relation, object: t.object };

function matches(t: StoredTuple, f: TupleFilter): boolean {
  if (f.user !== undefined && t.user !== f.user) return false;
  if (f.relation !== undefined && t.relation !== f.relation) return false;
  if (f.objectType !== undefined || f.objectId !== undefined) {
    const o = splitObjectKey(t.object);
    if (f.objectType !== undefined && o.type !== f.objectType) return false;
    if (f.objectId !== undefined && o.id !== f.objectId) return false;
  }
  return true;
}

/** A multimap whose sets keep insertion order, which is `seq` order because seq only grows. */
class Multi {
  private readonly map = new Map<string, Set<StoredTuple>>();
  add(key: string, t: StoredTuple): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(t);
  }
  remove(key: string, t: StoredTuple): void {
    const set = this.map.get(key);
    if (set?.delete(t) && set.size === 0) this.map.delete(key);
  }
  get(key: string): Iterable<StoredTuple> {
    return this.map.get(key) ?? [];
  }
}

/** Creates an empty in-memory store. Every read walks the narrowest index in `seq` order, so reads are stable. */
export function createMemoryStore(): AuthzStore {
  const tuples = new Map<string, StoredTuple>();
  const byObject = new Multi();
  const byUser = new Multi();
  const byType = new Multi();
  const models: StoredModel[] = [];
  /** OpenFGA assertions by model id (JSON array text) */
  const assertions = new Map<string, string>();
  let seq = 0;
  let revision = 0;
  let changes: TupleChange[] = [];
  const log = (op: TupleChange['op'], tuple: TupleKey | null): void => {
    changes.push({ revision, op, tuple: tuple ? copy(tuple) : null, at: Date.now() });
  };
  const next = (): number => {
    revision++;
    if (revision % 100 === 0) changes = changes.filter((c) => c.revision > revision - CHANGE_RETENTION);
    return revision;
  };
  const insert = (t: TupleKey): void => {
    const k = keyOf(t);
    if (tuples.has(k)) return;
    const stored: StoredTuple = { ...copy(t), seq: ++seq, writtenAt: Date.now() };
    tuples.set(k, stored);
    byObject.add(stored.object, stored);
    byUser.add(stored.user, stored);
    byType.add(splitObjectKey(stored.object).type, stored);
  };
  const remove = (t: TupleKey): boolean => {
    const k = keyOf(t);
    const stored = tuples.get(k);
    if (!stored) return false;
    tuples.delete(k);
    byObject.remove(stored.object, stored);
    byUser.remove(stored.user, stored);
    byType.remove(splitObjectKey(stored.object).type, stored);
    return true;
  };
  const source = (f: TupleFilter): Iterable<StoredTuple> => {
    if (f.objectType !== undefined && f.objectId !== undefined) return byObject.get(`${f.objectType}:${f.objectId}`);
    if (f.user !== undefined) return byUser.get(f.user);
    if (f.objectType !== undefined) return byType.get(f.objectType);
    return tuples.values();
  };

  return {
    async revision() {
      return revision;
    },
    knownRevision() {
      return revision;
    },
    async readPage(filter, afterSeq, limit) {
      const out: StoredTuple[] = [];
      for (const t of source(filter)) {
        if (t.seq <= afterSeq || !matches(t, filter)) continue;
        if (out.length === limit) return { tuples: out, more: true };
        out.push({ ...copy(t), seq: t.seq, writtenAt: t.writtenAt ?? null });
      }
      return { tuples: out, more: false };
    },
    async readByObject(objectType, objectId, relation) {
      return [...byObject.get(`${objectType}:${objectId}`)].filter((t) => t.relation === relation).map(copy);
    },
    async readByUser(user, relation, objectType) {
      return [...byUser.get(user)].filter((t) => t.relation === relation && splitObjectKey(t.object).type === objectType).map(copy);
    },
    async readAll() {
      return [...tuples.values()].map(copy);
    },
    async hasTuples() {
      return tuples.size > 0;
    },
    async readChanges(afterRevision, uptoRevision) {
      return changes.filter((c) => c.revision > afterRevision && c.revision <= uptoRevision).map((c) => ({ ...c, tuple: c.tuple ? copy(c.tuple) : null }));
    },
    async writeTuples(writes, deletes, conflicts) {
      if (conflicts?.existing === 'error') for (const t of writes) if (tuples.has(keyOf(t))) throw new TupleConflictError('existing', copy(t));
      if (conflicts?.missing === 'error') for (const t of deletes) if (!tuples.has(keyOf(t))) throw new TupleConflictError('missing', copy(t));
      next();
      for (const t of writes) {
        insert(t);
        log('write', t);
      }
      for (const t of deletes) {
        remove(t);
        log('delete', t);
      }
      if (writes.length + deletes.length === 0) log('none', null);
      return revision;
    },
    async deleteUserTuples(user) {
      next();
      const victims = [...byUser.get(user), ...byObject.get(user)].sort((a, b) => a.seq - b.seq);
      const deleted: TupleKey[] = [];
      for (const t of victims) if (remove(t)) deleted.push(copy(t));
      for (const t of deleted) log('delete', t);
      if (deleted.length === 0) log('none', null);
      return { deleted, revision };
    },
    async appendModel(model) {
      models.push({ id: model.id, dsl: model.dsl });
      next();
      log('model', null);
      return revision;
    },
    async latestModel() {
      const m = models[models.length - 1];
      return m ? { ...m } : null;
    },
    async resetIfEmpty() {
      if (tuples.size > 0) return false;
      models.length = 0;
      assertions.clear();
      next();
      log('reset', null);
      return true;
    },
    async readModel(id) {
      const m = models.find((x) => x.id === id);
      return m ? { ...m } : null;
    },
    async listModels(beforeId, limit) {
      return models.filter((m) => beforeId === null || m.id < beforeId).reverse().slice(0, limit).map((m) => ({ ...m }));
    },
    async writeAssertions(modelId, text) {
      assertions.set(modelId, text);
    },
    async readAssertions(modelId) {
      return assertions.get(modelId) ?? null;
    },
  };
}

/** The OpenFGA API's other stores in memory, each a {@link createMemoryStore} of its own (`--fga-store=memory`). */
export function createMemoryCatalog(): StoreCatalog {
  const stores = new Map<string, { info: StoreInfo; store: AuthzStore }>();
  return {
    async create({ id, name }) {
      const now = Date.now();
      const info = { id, name, createdAt: now, updatedAt: now };
      stores.set(id, { info, store: createMemoryStore() });
      return { ...info };
    },
    async get(id) {
      const s = stores.get(id);
      return s ? { ...s.info } : null;
    },
    async list({ name, afterId, limit }) {
      return [...stores.values()].map((s) => s.info)
        .filter((i) => (name === undefined || i.name === name) && (afterId === null || i.id > afterId))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit)
        .map((i) => ({ ...i }));
    },
    async rename(id, name) {
      const s = stores.get(id);
      if (!s) return null;
      s.info = { ...s.info, name, updatedAt: Date.now() };
      return { ...s.info };
    },
    async delete(id) {
      return stores.delete(id);
    },
    open(id) {
      const s = stores.get(id);
      // a store deleted meanwhile: an empty one, never shared (the caller checked it exists)
      return s ? s.store : createMemoryStore();
    },
  };
}
