/** @module authz/storage/sql/store: AuthzStore over a minimal SQL port (SQLite, PostgreSQL, MySQL/MariaDB); passes ports.suite.ts. */
import { pendingTxEvents, type WriteInfo } from '../tx-events.ts';
import { createHash } from 'node:crypto';
import type { SqlDialect } from './schema.ts';
import type { AuthzStore, StoredModel, StoredTuple, TupleChange, TupleFilter, TupleKey } from '../ports.ts';
import { CHANGE_RETENTION, splitObjectKey } from '../ports.ts';

export { fgaSchemaStatements, isDuplicateColumn } from './schema.ts';
export type { SqlDialect } from './schema.ts';

/**
 * The smallest database surface the store needs; the platform adapts its database to it.
 * `execute` takes `?` placeholders (rewritten to `$n` for PostgreSQL) and returns rows (empty for writes).
 * `transaction` runs `fn` on one connection inside BEGIN/COMMIT, rolling back when it throws.
 */
export interface SqlPort {
  execute(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  transaction<T>(fn: (tx: SqlPort) => Promise<T>): Promise<T>;
  dialect: SqlDialect;
  /**
   * Optional: `sql` (`?` placeholders) prepared once through the driver, outside any transaction. The
   * store reads its revision through it when present (issue 22 §1: a hot-path read that must hit the
   * database skips per-call query building); otherwise through `execute`.
   */
  prepare?(sql: string): (params: unknown[]) => Promise<Record<string, unknown>[]>;
}

const REVISION_SQL = 'SELECT revision FROM fga_revision WHERE id = ?';

const COLS = 'seq, object_type, object_id, relation, subject, condition_name, condition_context';
/** {@link COLS} and the write time, for readPage (the only read that answers it). */
const PAGE_COLS = `${COLS}, written_at`;

/** Stable unique key of a tuple: SHA-256 of its three parts (fits every dialect's index limits). */
function tupleKey(t: TupleKey): string {
  return createHash('sha256').update(`${t.object}\n${t.relation}\n${t.user}`).digest('hex');
}

/** The condition columns of a row, or null when the tuple has none. */
function conditionOf(r: Record<string, unknown>): TupleKey['condition'] {
  if (r.condition_name === null || r.condition_name === undefined || r.condition_name === '') return null;
  const context = r.condition_context === null || r.condition_context === undefined ? null : (JSON.parse(String(r.condition_context)) as Record<string, unknown>);
  return { name: String(r.condition_name), context };
}

/** A row's tuple (with its condition when it has one). */
function keyOfRow(r: Record<string, unknown>): TupleKey {
  const t: TupleKey = { user: String(r.subject), relation: String(r.relation), object: `${String(r.object_type)}:${String(r.object_id)}` };
  const condition = conditionOf(r);
  if (condition) t.condition = condition;
  return t;
}

/** The condition column values of a tuple. */
function conditionParams(t: TupleKey | null): [string | null, string | null] {
  const c = t?.condition;
  return c ? [c.name, c.context === null ? null : JSON.stringify(c.context)] : [null, null];
}

function rowToTuple(r: Record<string, unknown>): StoredTuple {
  return { seq: Number(r.seq), ...keyOfRow(r) };
}

/** A BIGINT milliseconds column as a number, or null (rows from before the column existed). */
const millisOf = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A stored tuple without its seq. */
function withoutSeq(t: StoredTuple): TupleKey {
  const { seq: _seq, ...key } = t;
  return key;
}

/**
 * Creates the store. Run {@link fgaSchemaStatements} on the database first.
 * @param options.externalVersion SQLite only: `PRAGMA data_version` of this process's connection to the
 *   file (`sqliteDataVersion` in @gatehouse/db). With it, `revision()` answers from memory while no other
 *   process has committed and this store has not written, instead of a query on every engine call.
 */
export function createSqlStore(db: SqlPort, options: { externalVersion?: (() => number) | null; outboxTable?: string } = {}): AuthzStore {
  const external = options.externalVersion ?? null;
  /**
   * issue 32: inside a write's transaction, the events of the RPC that made it ({@link withTxEvents})
   * go into the service's outbox; `commit` marks them stored once that transaction committed.
   */
  const stageEvents = async (tx: SqlPort, info: WriteInfo): Promise<() => void> => {
    const pending = options.outboxTable ? pendingTxEvents() : undefined;
    if (!pending) return () => {};
    for (const e of pending.make(info)) {
      await q(tx, `INSERT INTO ${options.outboxTable!} (id, name, source, occurred_at, data, trace_parent) VALUES (?, ?, ?, ?, ?, ?)`,
        [e.id, e.name, e.source, e.occurredAt, JSON.stringify(e.data ?? null), e.traceparent ?? null]);
    }
    return () => { pending.written = true; };
  };
  /** the revision last read, valid while `external()` still answers `seen` and no own write ran since */
  let known: number | null = null;
  let seen = Number.NaN;
  /** moved before and after every own write: a revision read that overlapped one is not kept */
  let ownWrites = 0;
  const writing = async <T>(work: () => Promise<T>): Promise<T> => {
    ownWrites++;
    known = null;
    try {
      return await work();
    } finally {
      ownWrites++;
      known = null;
    }
  };
  const q = (port: SqlPort, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> => {
    if (port.dialect !== 'postgres') return port.execute(sql, params);
    let n = 0;
    return port.execute(sql.replace(/\?/g, () => `$${++n}`), params);
  };
  const readRevision = db.prepare?.(REVISION_SQL) ?? ((params: unknown[]) => q(db, REVISION_SQL, params));
  const insertIgnore = (n: number): string => {
    const values = Array.from({ length: n }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    const cols = 'fga_tuples (tuple_key, object_type, object_id, relation, subject, condition_name, condition_context, written_at)';
    if (db.dialect === 'mysql') return `INSERT IGNORE INTO ${cols} VALUES ${values}`;
    if (db.dialect === 'postgres') return `INSERT INTO ${cols} VALUES ${values} ON CONFLICT (tuple_key) DO NOTHING`;
    return `INSERT OR IGNORE INTO ${cols} VALUES ${values}`;
  };
  // Every write transaction bumps the revision first: the row lock orders writers and reset (no tuple slips past a reset).
  const bump = async (tx: SqlPort): Promise<number> => {
    await q(tx, 'UPDATE fga_revision SET revision = revision + 1 WHERE id = 1');
    const rows = await q(tx, 'SELECT revision FROM fga_revision WHERE id = 1');
    const revision = Number(rows[0]?.revision ?? 0);
    if (revision % 100 === 0) await q(tx, 'DELETE FROM fga_changes WHERE revision <= ?', [revision - CHANGE_RETENTION]);
    return revision;
  };
  // The change log: one row per tuple operation, or one marker row, for every revision.
  const log = async (tx: SqlPort, revision: number, entries: Array<{ op: TupleChange['op']; tuple: TupleKey | null }>): Promise<void> => {
    const rows = entries.length > 0 ? entries : [{ op: 'none' as const, tuple: null }];
    const at = Date.now();
    const params = rows.flatMap(({ op, tuple }) => {
      const o = tuple ? splitObjectKey(tuple.object) : null;
      return [revision, op, tuple?.user ?? null, tuple?.relation ?? null, o?.type ?? null, o?.id ?? null, ...conditionParams(tuple), at];
    });
    const values = rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    await q(tx, `INSERT INTO fga_changes (revision, op, subject, relation, object_type, object_id, condition_name, condition_context, changed_at) VALUES ${values}`, params);
  };

  return {
    async revision() {
      let at = ownWrites;
      if (external) {
        const v = external();
        if (known !== null && v === seen) return known;
        seen = v; // read before the query: a commit after this point moves the version again
        at = ownWrites;
      }
      const rows = await readRevision([1]);
      const revision = Number(rows[0]?.revision ?? 0);
      if (external && at === ownWrites) known = revision;
      return revision;
    },

    knownRevision() {
      // exactly revision()'s answer-from-memory case
      return external !== null && known !== null && external() === seen ? known : null;
    },

    async readPage(filter: TupleFilter, afterSeq, limit) {
      const where = ['seq > ?'];
      const params: unknown[] = [afterSeq];
      if (filter.user !== undefined) {
        where.push('subject = ?');
        params.push(filter.user);
      }
      if (filter.relation !== undefined) {
        where.push('relation = ?');
        params.push(filter.relation);
      }
      if (filter.objectType !== undefined) {
        where.push('object_type = ?');
        params.push(filter.objectType);
      }
      if (filter.objectId !== undefined) {
        where.push('object_id = ?');
        params.push(filter.objectId);
      }
      const rows = await q(db, `SELECT ${PAGE_COLS} FROM fga_tuples WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${limit + 1}`, params);
      return { tuples: rows.slice(0, limit).map((r) => ({ ...rowToTuple(r), writtenAt: millisOf(r.written_at) })), more: rows.length > limit };
    },

    async readByObject(objectType, objectId, relation) {
      const rows = await q(db, `SELECT ${COLS} FROM fga_tuples WHERE object_type = ? AND object_id = ? AND relation = ? ORDER BY seq`, [
        objectType,
        objectId,
        relation,
      ]);
      return rows.map(rowToTuple).map(withoutSeq);
    },

    async readByUser(user, relation, objectType) {
      const rows = await q(db, `SELECT ${COLS} FROM fga_tuples WHERE subject = ? AND relation = ? AND object_type = ? ORDER BY seq`, [
        user,
        relation,
        objectType,
      ]);
      return rows.map(rowToTuple).map(withoutSeq);
    },

    async readAll() {
      const rows = await q(db, 'SELECT object_type, object_id, relation, subject, condition_name, condition_context FROM fga_tuples ORDER BY seq');
      return rows.map(keyOfRow);
    },

    async hasTuples() {
      return (await q(db, 'SELECT seq FROM fga_tuples LIMIT 1')).length > 0;
    },

    async readChanges(afterRevision, uptoRevision) {
      const rows = await q(
        db,
        'SELECT revision, op, subject, relation, object_type, object_id, condition_name, condition_context, changed_at FROM fga_changes WHERE revision > ? AND revision <= ? ORDER BY revision, id',
        [afterRevision, uptoRevision],
      );
      return rows.map((r) => ({
        revision: Number(r.revision),
        op: String(r.op) as TupleChange['op'],
        tuple: r.subject === null || r.subject === undefined ? null : keyOfRow(r),
        at: millisOf(r.changed_at),
      }));
    },

    async writeTuples(writes, deletes) {
      return writing(async () => {
        return db.transaction(async (tx) => {
          const revision = await bump(tx);
          if (writes.length > 0) {
            const now = Date.now();
            const params = writes.flatMap((t) => {
              const o = splitObjectKey(t.object);
              return [tupleKey(t), o.type, o.id, t.relation, t.user, ...conditionParams(t), now];
            });
            await q(tx, insertIgnore(writes.length), params);
          }
          if (deletes.length > 0) {
            await q(tx, `DELETE FROM fga_tuples WHERE tuple_key IN (${deletes.map(() => '?').join(', ')})`, deletes.map(tupleKey));
          }
          await log(tx, revision, [...writes.map((tuple) => ({ op: 'write' as const, tuple })), ...deletes.map((tuple) => ({ op: 'delete' as const, tuple }))]);
          return { revision, commit: await stageEvents(tx, {}) };
        }).then(({ revision, commit }) => {
          commit();
          return revision;
        });
      });
    },

    async deleteUserTuples(user) {
      return writing(async () => {
        return db.transaction(async (tx) => {
          const revision = await bump(tx);
          const o = splitObjectKey(user);
          const cond = 'subject = ? OR (object_type = ? AND object_id = ?)';
          const rows = await q(tx, `SELECT ${COLS} FROM fga_tuples WHERE ${cond} ORDER BY seq`, [user, o.type, o.id]);
          if (rows.length > 0) await q(tx, `DELETE FROM fga_tuples WHERE ${cond}`, [user, o.type, o.id]);
          const deleted = rows.map(rowToTuple).map(withoutSeq);
          await log(tx, revision, deleted.map((tuple) => ({ op: 'delete' as const, tuple })));
          return { deleted, revision };
        });
      });
    },

    async appendModel(model: StoredModel) {
      return writing(async () => {
        return db.transaction(async (tx) => {
          const revision = await bump(tx);
          await q(tx, 'INSERT INTO fga_models (id, dsl, created_at) VALUES (?, ?, ?)', [model.id, model.dsl, Math.floor(Date.now() / 1000)]);
          await log(tx, revision, [{ op: 'model', tuple: null }]);
          return { revision, commit: await stageEvents(tx, { modelId: model.id }) };
        }).then(({ revision, commit }) => {
          commit();
          return revision;
        });
      });
    },

    async latestModel() {
      const rows = await q(db, 'SELECT id, dsl FROM fga_models ORDER BY id DESC LIMIT 1');
      const r = rows[0];
      return r ? { id: String(r.id), dsl: String(r.dsl) } : null;
    },

    async readModel(id: string) {
      const r = (await q(db, 'SELECT id, dsl FROM fga_models WHERE id = ?', [id]))[0];
      return r ? { id: String(r.id), dsl: String(r.dsl) } : null;
    },

    async listModels(beforeId: string | null, limit: number) {
      const rows = beforeId === null
        ? await q(db, 'SELECT id, dsl FROM fga_models ORDER BY id DESC LIMIT ?', [limit])
        : await q(db, 'SELECT id, dsl FROM fga_models WHERE id < ? ORDER BY id DESC LIMIT ?', [beforeId, limit]);
      return rows.map((r) => ({ id: String(r.id), dsl: String(r.dsl) }));
    },

    async writeAssertions(modelId: string, text: string) {
      await db.transaction(async (tx) => {
        await q(tx, 'DELETE FROM fga_assertions WHERE model_id = ?', [modelId]);
        await q(tx, 'INSERT INTO fga_assertions (model_id, assertions) VALUES (?, ?)', [modelId, text]);
      });
    },

    async readAssertions(modelId: string) {
      const r = (await q(db, 'SELECT assertions FROM fga_assertions WHERE model_id = ?', [modelId]))[0];
      return r ? String(r.assertions) : null;
    },

    async resetIfEmpty() {
      return writing(async () => {
        return db.transaction(async (tx) => {
          const revision = await bump(tx);
          if ((await q(tx, 'SELECT seq FROM fga_tuples LIMIT 1')).length > 0) throw new ResetRefused();
          await q(tx, 'DELETE FROM fga_models');
          await q(tx, 'DELETE FROM fga_assertions');
          await log(tx, revision, [{ op: 'reset', tuple: null }]);
          return stageEvents(tx, {});
        }).then((commit) => {
          commit();
          return true;
        }, (err: unknown) => {
          if (err instanceof ResetRefused) return false;
          throw err;
        });
      });
    },
  };
}

/** Rolls the reset transaction back (the revision bump included) when tuples exist. */
class ResetRefused extends Error {}
