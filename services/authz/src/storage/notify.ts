/**
 * @module authz/storage/notify
 * Publishes every store write on the process's notification channel (issue 22 §1; libs/auth README
 * "Credential caches"), so every replica's `revision()` re-reads on its next request after the write
 * returns (behaviour.md §7.1) instead of querying the revision on every call.
 */
import type { AuthzStore } from './ports.ts';

/**
 * Wraps `store`: `writeTuples`, `deleteUserTuples`, `appendModel` and `resetIfEmpty` await `publish()`
 * after the write (also when it threw: it may have committed before failing), before they resolve.
 * Reads pass through unchanged.
 */
export function publishingStore(store: AuthzStore, publish: () => Promise<void>): AuthzStore {
  const published = async <T>(write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      await publish();
    }
  };
  return {
    revision: () => store.revision(),
    ...(store.knownRevision ? { knownRevision: () => store.knownRevision!() } : {}),
    readPage: (filter, afterSeq, limit) => store.readPage(filter, afterSeq, limit),
    readByObject: (type, id, relation) => store.readByObject(type, id, relation),
    readByUser: (user, relation, type) => store.readByUser(user, relation, type),
    readAll: () => store.readAll(),
    hasTuples: () => store.hasTuples(),
    readChanges: (after, upto) => store.readChanges(after, upto),
    writeTuples: (writes, deletes, conflicts) => published(() => store.writeTuples(writes, deletes, conflicts)),
    deleteUserTuples: (user) => published(() => store.deleteUserTuples(user)),
    appendModel: (model) => published(() => store.appendModel(model)),
    latestModel: () => store.latestModel(),
    resetIfEmpty: () => published(() => store.resetIfEmpty()),
    readModel: (id) => store.readModel(id),
    listModels: (beforeId, limit) => store.listModels(beforeId, limit),
    writeAssertions: (modelId, assertions) => store.writeAssertions(modelId, assertions),
    readAssertions: (modelId) => store.readAssertions(modelId),
  };
}
