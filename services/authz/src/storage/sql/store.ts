/** @module authz/storage/sql/store: AuthzStore over a minimal SQL port (SQLite, PostgreSQL, MySQL/MariaDB); passes ports.suite.ts. */
import { pendingTxEvents, type WriteInfo } from '../tx-events.ts';
import { createHash } from 'node:crypto';
import type { SqlDialect } from './schema.ts';
import type { AuthzStore, ChangeLogCompactor, StoredModel, StoredTuple, TupleChange, TupleFilter, TupleKey } from '../ports.ts';
import { CHANGE_LOG_CEILING, TupleConflictError, splitObjectKey } from '../ports.ts';

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

/**
 * Where one store's rows are: Gatehouse's own store in the `fga_*` tables (no store column, the queries as
 * they always were), another OpenFGA API store in the `fga_store_*` tables under its `store_id`. `w` is
 * the store's condition as a prefix of a WHERE clause and `p` its parameters; `c` / `v` the column and
 * placeholder an INSERT adds.
 */
interface Scope {
  tuples: string;
  models: string;
  changes: string;
  assertions: string;
  w: string;
  p: unknown[];
  c: string;
  v: string;
  revisionSql: string;
  revisionParams: unknown[];
  bumpSql: string;
  conflict: string;
}

const OWN_SCOPE: Scope = {
  tuples: 'fga_tuples', models: 'fga_models', changes: 'fga_changes', assertions: 'fga_assertions', w: '', p: [], c: '', v: '',
  revisionSql: 'SELECT revision FROM fga_revision WHERE id = ?', revisionParams: [1], bumpSql: 'UPDATE fga_revision SET revision = revision + 1 WHERE id = ?', conflict: 'tuple_key',
};

/** The scope of OpenFGA API store `storeId` (a ULID; the rows of `fga_stores` and `fga_store_revision` are the caller's). */
function storeScope(storeId: string): Scope {
  return {
    tuples: 'fga_store_tuples', models: 'fga_store_models', changes: 'fga_store_changes', assertions: 'fga_store_assertions',
    w: 'store_id = ? AND ', p: [storeId], c: 'store_id, ', v: '?, ',
    revisionSql: 'SELECT revision FROM fga_store_revision WHERE store_id = ?', revisionParams: [storeId],
    bumpSql: 'UPDATE fga_store_revision SET revision = revision + 1 WHERE store_id = ?', conflict: 'store_id, tuple_key',
  };
}

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
 * @param options.storeId an OpenFGA API store other than Gatehouse's own (issue 36 §1): its `fga_store_*`
 *   rows. The replica reports and `compactChanges` (issue 32 §3) are the own store's only.
 */
export function createSqlStore(db: SqlPort, options: { externalVersion?: (() => number) | null; outboxTable?: string; storeId?: string } = {}): AuthzStore & ChangeLogCompactor {
  const external = options.externalVersion ?? null;
  const S = options.storeId === undefined ? OWN_SCOPE : storeScope(options.storeId);
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
  const readRevision = db.prepare?.(S.revisionSql) ?? ((params: unknown[]) => q(db, S.revisionSql, params));
  const insertIgnore = (n: number): string => {
    const values = Array.from({ length: n }, () => `(${S.v}?, ?, ?, ?, ?, ?, ?, ?)`).join(', ');
    const cols = `${S.tuples} (${S.c}tuple_key, object_type, object_id, relation, subject, condition_name, condition_context, written_at)`;
    if (db.dialect === 'mysql') return `INSERT IGNORE INTO ${cols} VALUES ${values}`;
    if (db.dialect === 'postgres') return `INSERT INTO ${cols} VALUES ${values} ON CONFLICT (${S.conflict}) DO NOTHING`;
    return `INSERT OR IGNORE INTO ${cols} VALUES ${values}`;
  };
  // Every write transaction bumps the revision first: the row lock orders writers and reset (no tuple slips past a reset).
  const bump = async (tx: SqlPort): Promise<number> => {
    await q(tx, S.bumpSql, S.revisionParams);
    const rows = await q(tx, S.revisionSql, S.revisionParams);
    const revision = Number(rows[0]?.revision ?? 0);
    // the ceiling, also without a compactor running (issue 32 §3: compactChanges deletes what no replica
    // needs); the OpenFGA API's created stores (issue 36 §1) are trimmed at the ceiling only
    if (revision % 100 === 0) await q(tx, `DELETE FROM ${S.changes} WHERE ${S.w}revision <= ?`, [...S.p, revision - CHANGE_LOG_CEILING]);
    return revision;
  };
  // The change log: one row per tuple operation, or one marker row, for every revision.
  const log = async (tx: SqlPort, revision: number, entries: Array<{ op: TupleChange['op']; tuple: TupleKey | null }>): Promise<void> => {
    const rows = entries.length > 0 ? entries : [{ op: 'none' as const, tuple: null }];
    const at = Date.now();
    const params = rows.flatMap(({ op, tuple }) => {
      const o = tuple ? splitObjectKey(tuple.object) : null;
      return [...S.p, revision, op, tuple?.user ?? null, tuple?.relation ?? null, o?.type ?? null, o?.id ?? null, ...conditionParams(tuple), at];
    });
    const values = rows.map(() => `(${S.v}?, ?, ?, ?, ?, ?, ?, ?, ?)`).join(', ');
    await q(tx, `INSERT INTO ${S.changes} (${S.c}revision, op, subject, relation, object_type, object_id, condition_name, condition_context, changed_at) VALUES ${values}`, params);
  };

  /**
   * PostgreSQL, a call that only writes (no deletes, no conflict check): one prepared statement, run outside
   * any transaction (its own), with the tuples as seven array parameters (`unnest`), so the text never changes,
   * is parsed once per connection and carries no per-tuple placeholders. It takes the revision row lock before
   * it inserts anything (the inserts read the bumped row), inserts the tuples, their change-log entries at that
   * revision and the call's outbox events, and commits: the lock is held for one statement on the server, not
   * across client round trips. Null on other dialects or without `prepare`: the transaction below serves them.
   */
  const writeOnly = db.dialect === 'postgres' && db.prepare ? db.prepare(writeOnlySql(S, options.outboxTable)) : null;

  const upsertReplica = db.dialect === 'mysql'
    ? 'INSERT INTO fga_replicas (replica_id, revision, seen_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE revision = VALUES(revision), seen_at = VALUES(seen_at)'
    : 'INSERT INTO fga_replicas (replica_id, revision, seen_at) VALUES (?, ?, ?) ON CONFLICT (replica_id) DO UPDATE SET revision = excluded.revision, seen_at = excluded.seen_at';

  return {
    async reportReplica(replicaId, revision, now) {
      await q(db, upsertReplica, [replicaId, revision, now]);
    },

    async forgetReplica(replicaId) {
      await q(db, 'DELETE FROM fga_replicas WHERE replica_id = ?', [replicaId]);
    },

    async compactChanges({ liveSince, forgetBefore, floor, ceiling }) {
      return db.transaction(async (tx) => {
        const current = Number((await q(tx, OWN_SCOPE.revisionSql, OWN_SCOPE.revisionParams))[0]?.revision ?? 0);
        const live = (await q(tx, 'SELECT MIN(revision) AS r FROM fga_replicas WHERE seen_at >= ?', [liveSince]))[0]?.r;
        const needed = live === null || live === undefined ? current : Number(live);
        const horizon = Math.max(0, Math.max(Math.min(needed, current - floor), current - ceiling));
        const count = Number((await q(tx, 'SELECT COUNT(*) AS n FROM fga_changes WHERE revision <= ?', [horizon]))[0]?.n ?? 0);
        if (count > 0) await q(tx, 'DELETE FROM fga_changes WHERE revision <= ?', [horizon]);
        await q(tx, 'DELETE FROM fga_replicas WHERE seen_at < ?', [forgetBefore]);
        return { horizon, deleted: count };
      });
    },

    async revision() {
      const at = ownWrites;
      // read before the query: a commit after this point moves the version again
      const v = external ? external() : Number.NaN;
      if (known !== null && v === seen) return known;
      const rows = await readRevision(S.revisionParams);
      const revision = Number(rows[0]?.revision ?? 0);
      // kept only while nothing moved during the query: reads overlap (one per pool connection) and may
      // answer out of order, and an answer from before a notification must not replace a newer one under
      // the newer version (issue 38: a replica then kept answering from its old snapshot)
      if (external && at === ownWrites && external() === v) {
        known = revision;
        seen = v;
      }
      return revision;
    },

    knownRevision() {
      // exactly revision()'s answer-from-memory case
      return external !== null && known !== null && external() === seen ? known : null;
    },

    async readPage(filter: TupleFilter, afterSeq, limit) {
      const where = [`${S.w}seq > ?`];
      const params: unknown[] = [...S.p, afterSeq];
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
      const rows = await q(db, `SELECT ${PAGE_COLS} FROM ${S.tuples} WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${limit + 1}`, params);
      return { tuples: rows.slice(0, limit).map((r) => ({ ...rowToTuple(r), writtenAt: millisOf(r.written_at) })), more: rows.length > limit };
    },

    async readByObject(objectType, objectId, relation) {
      const rows = await q(db, `SELECT ${COLS} FROM ${S.tuples} WHERE ${S.w}object_type = ? AND object_id = ? AND relation = ? ORDER BY seq`, [
        ...S.p,
        objectType,
        objectId,
        relation,
      ]);
      return rows.map(rowToTuple).map(withoutSeq);
    },

    async readByUser(user, relation, objectType) {
      const rows = await q(db, `SELECT ${COLS} FROM ${S.tuples} WHERE ${S.w}subject = ? AND relation = ? AND object_type = ? ORDER BY seq`, [
        ...S.p,
        user,
        relation,
        objectType,
      ]);
      return rows.map(rowToTuple).map(withoutSeq);
    },

    async readAll() {
      const rows = await q(db, `SELECT object_type, object_id, relation, subject, condition_name, condition_context FROM ${S.tuples}${S.w ? ' WHERE store_id = ?' : ''} ORDER BY seq`, S.p);
      return rows.map(keyOfRow);
    },

    async hasTuples() {
      return (await q(db, `SELECT seq FROM ${S.tuples}${S.w ? ' WHERE store_id = ?' : ''} LIMIT 1`, S.p)).length > 0;
    },

    async readChanges(afterRevision, uptoRevision) {
      const rows = await q(
        db,
        `SELECT revision, op, subject, relation, object_type, object_id, condition_name, condition_context, changed_at FROM ${S.changes} WHERE ${S.w}revision > ? AND revision <= ? ORDER BY revision, id`,
        [...S.p, afterRevision, uptoRevision],
      );
      return rows.map((r) => ({
        revision: Number(r.revision),
        op: String(r.op) as TupleChange['op'],
        tuple: r.subject === null || r.subject === undefined ? null : keyOfRow(r),
        at: millisOf(r.changed_at),
      }));
    },

    async writeTuples(writes, deletes, conflicts) {
      if (writeOnly !== null && writes.length > 0 && deletes.length === 0 && conflicts?.existing !== 'error') {
        return writing(async () => {
          const cols: Array<Array<string | null>> = [[], [], [], [], [], [], []];
          for (const t of writes) {
            const o = splitObjectKey(t.object);
            const [name, context] = conditionParams(t);
            cols[0]!.push(tupleKey(t));
            cols[1]!.push(o.type);
            cols[2]!.push(o.id);
            cols[3]!.push(t.relation);
            cols[4]!.push(t.user);
            cols[5]!.push(name);
            cols[6]!.push(context);
          }
          const pending = options.outboxTable ? pendingTxEvents() : undefined;
          const events = pending?.make({}) ?? [];
          const outbox = options.outboxTable
            ? [events.map((e) => e.id), events.map((e) => e.name), events.map((e) => e.source), events.map((e) => String(e.occurredAt)),
              events.map((e) => JSON.stringify(e.data ?? null)), events.map((e) => e.traceparent ?? null)]
            : [];
          const rows = await writeOnly([...cols, Date.now(), ...S.p, ...outbox]);
          const revision = Number(rows[0]?.revision ?? 0);
          if (pending) pending.written = true;
          // the ceiling, as bump() keeps it (a statement of its own: the write has committed)
          if (revision % 100 === 0) await q(db, `DELETE FROM ${S.changes} WHERE ${S.w}revision <= ?`, [...S.p, revision - CHANGE_LOG_CEILING]);
          return revision;
        });
      }
      return writing(async () => {
        return db.transaction(async (tx) => {
          const revision = await bump(tx);
          // after the revision lock: every other writer has committed or waits, so one read sees what exists
          const strictWrites = conflicts?.existing === 'error' ? writes : [];
          const strictDeletes = conflicts?.missing === 'error' ? deletes : [];
          if (strictWrites.length + strictDeletes.length > 0) {
            const keys = [...strictWrites, ...strictDeletes].map(tupleKey);
            const rows = await q(tx, `SELECT tuple_key FROM ${S.tuples} WHERE ${S.w}tuple_key IN (${keys.map(() => '?').join(', ')})`, [...S.p, ...keys]);
            const present = new Set(rows.map((r) => String(r.tuple_key)));
            for (const t of strictWrites) if (present.has(tupleKey(t))) throw new TupleConflictError('existing', t);
            for (const t of strictDeletes) if (!present.has(tupleKey(t))) throw new TupleConflictError('missing', t);
          }
          if (writes.length > 0) {
            const now = Date.now();
            const params = writes.flatMap((t) => {
              const o = splitObjectKey(t.object);
              return [...S.p, tupleKey(t), o.type, o.id, t.relation, t.user, ...conditionParams(t), now];
            });
            await q(tx, insertIgnore(writes.length), params);
          }
          if (deletes.length > 0) {
            await q(tx, `DELETE FROM ${S.tuples} WHERE ${S.w}tuple_key IN (${deletes.map(() => '?').join(', ')})`, [...S.p, ...deletes.map(tupleKey)]);
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
          const cond = `${S.w}(subject = ? OR (object_type = ? AND object_id = ?))`;
          const rows = await q(tx, `SELECT ${COLS} FROM ${S.tuples} WHERE ${cond} ORDER BY seq`, [...S.p, user, o.type, o.id]);
          if (rows.length > 0) await q(tx, `DELETE FROM ${S.tuples} WHERE ${cond}`, [...S.p, user, o.type, o.id]);
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
          await q(tx, `INSERT INTO ${S.models} (${S.c}id, dsl, created_at) VALUES (${S.v}?, ?, ?)`, [...S.p, model.id, model.dsl, Math.floor(Date.now() / 1000)]);
          await log(tx, revision, [{ op: 'model', tuple: null }]);
          return { revision, commit: await stageEvents(tx, { modelId: model.id }) };
        }).then(({ revision, commit }) => {
          commit();
          return revision;
        });
      });
    },

    async latestModel() {
      const rows = await q(db, `SELECT id, dsl FROM ${S.models}${S.w ? ' WHERE store_id = ?' : ''} ORDER BY id DESC LIMIT 1`, S.p);
      const r = rows[0];
      return r ? { id: String(r.id), dsl: String(r.dsl) } : null;
    },

    async readModel(id: string) {
      const r = (await q(db, `SELECT id, dsl FROM ${S.models} WHERE ${S.w}id = ?`, [...S.p, id]))[0];
      return r ? { id: String(r.id), dsl: String(r.dsl) } : null;
    },

    async listModels(beforeId: string | null, limit: number) {
      const rows = beforeId === null
        ? await q(db, `SELECT id, dsl FROM ${S.models}${S.w ? ' WHERE store_id = ?' : ''} ORDER BY id DESC LIMIT ?`, [...S.p, limit])
        : await q(db, `SELECT id, dsl FROM ${S.models} WHERE ${S.w}id < ? ORDER BY id DESC LIMIT ?`, [...S.p, beforeId, limit]);
      return rows.map((r) => ({ id: String(r.id), dsl: String(r.dsl) }));
    },

    async writeAssertions(modelId: string, text: string) {
      await db.transaction(async (tx) => {
        await q(tx, `DELETE FROM ${S.assertions} WHERE ${S.w}model_id = ?`, [...S.p, modelId]);
        await q(tx, `INSERT INTO ${S.assertions} (${S.c}model_id, assertions) VALUES (${S.v}?, ?)`, [...S.p, modelId, text]);
      });
    },

    async readAssertions(modelId: string) {
      const r = (await q(db, `SELECT assertions FROM ${S.assertions} WHERE ${S.w}model_id = ?`, [...S.p, modelId]))[0];
      return r ? String(r.assertions) : null;
    },

    async resetIfEmpty() {
      return writing(async () => {
        return db.transaction(async (tx) => {
          const revision = await bump(tx);
          const all = S.w ? ' WHERE store_id = ?' : '';
          if ((await q(tx, `SELECT seq FROM ${S.tuples}${all} LIMIT 1`, S.p)).length > 0) throw new ResetRefused();
          await q(tx, `DELETE FROM ${S.models}${all}`, S.p);
          await q(tx, `DELETE FROM ${S.assertions}${all}`, S.p);
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

/**
 * The text of the PostgreSQL write-only statement (see `writeOnly` in {@link createSqlStore}) for scope `S`:
 * `$1`–`$7` the tuples' key, object type, object id, relation, user, condition name and context as text
 * arrays, `$8` the write time (ms), `$9` the store id of an OpenFGA API store; with an outbox, the events'
 * id, name, source, occurred_at, data and trace_parent as six more arrays. Returns the new revision.
 */
function writeOnlySql(S: Scope, outboxTable: string | undefined): string {
  const store = S.p.length > 0;
  const sid = store ? '$9, ' : '';
  const ob = store ? 10 : 9;
  const bump = store
    ? 'UPDATE fga_store_revision SET revision = revision + 1 WHERE store_id = $9 RETURNING revision'
    : 'UPDATE fga_revision SET revision = revision + 1 WHERE id = 1 RETURNING revision';
  const outbox = outboxTable === undefined ? '' : `,
  ob AS (INSERT INTO ${outboxTable} (id, name, source, occurred_at, data, trace_parent)
    SELECT e.id::uuid, e.name, e.source, e.occurred_at::bigint, e.data, e.trace_parent FROM rev,
      unnest($${ob}::text[], $${ob + 1}::text[], $${ob + 2}::text[], $${ob + 3}::text[], $${ob + 4}::text[], $${ob + 5}::text[])
        AS e(id, name, source, occurred_at, data, trace_parent))`;
  // every insert reads rev, so the revision row is locked (and bumped) before the first tuple goes in
  return `WITH rev AS (${bump}),
  v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
    WITH ORDINALITY AS v(tuple_key, object_type, object_id, relation, subject, condition_name, condition_context, n)),
  ins AS (INSERT INTO ${S.tuples} (${S.c}tuple_key, object_type, object_id, relation, subject, condition_name, condition_context, written_at)
    SELECT ${sid}v.tuple_key, v.object_type, v.object_id, v.relation, v.subject, v.condition_name, v.condition_context, $8::bigint
    FROM rev CROSS JOIN v ORDER BY v.n ON CONFLICT (${S.conflict}) DO NOTHING),
  log AS (INSERT INTO ${S.changes} (${S.c}revision, op, subject, relation, object_type, object_id, condition_name, condition_context, changed_at)
    SELECT ${sid}rev.revision, 'write', v.subject, v.relation, v.object_type, v.object_id, v.condition_name, v.condition_context, $8::bigint
    FROM rev CROSS JOIN v ORDER BY v.n)${outbox}
SELECT revision FROM rev`;
}

/** Rolls the reset transaction back (the revision bump included) when tuples exist. */
class ResetRefused extends Error {}
