/**
 * @module @gatehouse/db/reseal
 * Re-sealing (issue 32): after a new key is put first in `--encryption-key`, every value a service
 * sealed under an older key of the ring is opened and sealed again under the first, so the old key can
 * be dropped. Each service declares its sealed columns ({@link SealedColumn}); `gatehouse reseal` runs
 * one pass over them and reports counts, and every service runs the same pass in the background
 * ({@link startResealer}), on every supported database (SQL and MongoDB).
 *
 * A pass reads the rows whose value is not already sealed under the first key (by the `v2.<key id>.`
 * prefix), in primary-key order and in batches, re-seals each, and writes it back only while the row
 * still holds the value it read (compare-and-set), so a value changed meanwhile is left to the next
 * pass and two replicas resealing at once never lose a write.
 */
import type { EntityManager } from '@mikro-orm/core';
import { jobSecretAad, needsReseal, reseal, SEALED_JOB_FIELDS, type KeyRing } from '@gatehouse/crypto';
import type { Logger } from '@gatehouse/observability';
import { quoteIdentifier } from './ddl.ts';
import { MONGO_OUTBOX_FIELD, type MongoOutboxEntry } from './outbox.ts';
import { startPeriodic } from './periodic.ts';
import { affected, entityColumn } from './sweeper.ts';
import type { Database } from './types.ts';

/** One sealed column of a service's table. */
export interface SealedColumn {
  /** the table (MongoDB: the collection of the entity stored in it) */
  readonly table: string;
  /** its primary key column (a single column) */
  readonly key: string;
  /** the column holding the sealed text (`v1.…` or `v2.<key id>.…`) */
  readonly column: string;
  /** the ring the service seals this column with */
  readonly ring: KeyRing;
  /** further columns the associated data is made of */
  readonly aadColumns?: readonly string[];
  /** the associated data the value was sealed with, from its row (SQL column names); absent: none */
  aad?(row: Readonly<Record<string, unknown>>): string;
}

/** What one pass did to one column: values re-sealed, and values no key of the ring opens. */
export interface ResealCount {
  resealed: number;
  unreadable: number;
}

const BATCH = 200;

/** `v2.<id>.` as a LIKE pattern with `!` as the escape character (ids are base64url: `_` is a wildcard). */
const likePrefix = (ring: KeyRing): string => `v2.${ring.keys[0].id}.`.replace(/[!%_]/g, (c) => `!${c}`) + '%';

/** The part of the driver's collection a pass uses. */
interface MongoCollection {
  find(filter: object, options: { projection: object; sort: object; limit: number }): { toArray(): Promise<Array<Record<string, unknown>>> };
  updateOne(filter: object, update: object): Promise<{ modifiedCount: number }>;
}

type Row = Record<string, unknown>;
/** One batch of rows still to re-seal after `after` (SQL column names), and the compare-and-set write. */
interface Access {
  batch(after: unknown): Promise<Row[]>;
  write(row: Row, next: string): Promise<boolean>;
}

function sqlAccess(em: EntityManager, db: Database, c: SealedColumn): Access {
  const conn = em.getConnection() as unknown as { execute(sql: string, params: unknown[], method: 'all' | 'run'): Promise<unknown> };
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const cols = [c.key, c.column, ...(c.aadColumns ?? [])].filter((v, i, a) => a.indexOf(v) === i);
  return {
    async batch(after) {
      const where = `${q(c.column)} is not null and ${q(c.column)} not like ? escape '!'${after === undefined ? '' : ` and ${q(c.key)} > ?`}`;
      const params = after === undefined ? [likePrefix(c.ring)] : [likePrefix(c.ring), after];
      return (await conn.execute(`select ${cols.map(q).join(', ')} from ${q(c.table)} where ${where} order by ${q(c.key)} limit ${BATCH}`, params, 'all')) as Row[];
    },
    async write(row, next) {
      const res = await conn.execute(`update ${q(c.table)} set ${q(c.column)} = ? where ${q(c.key)} = ? and ${q(c.column)} = ?`, [next, row[c.key], row[c.column]], 'run');
      return affected(res) > 0;
    },
  };
}

function mongoAccess(em: EntityManager, db: Database, c: SealedColumn): Access {
  const cols = [c.key, c.column, ...(c.aadColumns ?? [])];
  const { meta } = entityColumn(db, c, c.key);
  const field = (col: string): string => (col === c.key ? '_id' : entityColumn(db, c, col).prop.fieldNames[0]!);
  const coll = (em as unknown as { getCollection(name: string): MongoCollection }).getCollection(meta.collection);
  const sealedField = field(c.column);
  const current = new RegExp(`^v2\\.${c.ring.keys[0].id.replace(/[-]/g, '\\-')}\\.`);
  return {
    async batch(after) {
      const filter = { [sealedField]: { $type: 'string', $not: current }, ...(after === undefined ? {} : { _id: { $gt: after } }) };
      const docs = await coll.find(filter, { projection: Object.fromEntries(cols.map((col) => [field(col), 1])), sort: { _id: 1 }, limit: BATCH }).toArray();
      return docs.map((d) => Object.fromEntries(cols.map((col) => [col, d[field(col)]])));
    },
    async write(row, next) {
      const res = await coll.updateOne({ _id: row[c.key], [sealedField]: row[c.column] }, { $set: { [sealedField]: next } });
      return res.modifiedCount > 0;
    },
  };
}

/**
 * One pass over `columns` on `db`: every value not sealed under its ring's first key is re-sealed; with
 * `outbox`, the sealed fields of the delivery jobs waiting in the service's outbox too ({@link resealOutbox}).
 * A value no key of the ring opens is counted as unreadable and left as it is (the key that sealed
 * it was dropped too early: put it back in the ring and run again).
 *
 * @returns per `<table>.<column>`, the values re-sealed and the unreadable ones
 * @throws whatever the database throws (the background resealer logs it and retries)
 */
export async function resealColumns(db: Database, columns: readonly SealedColumn[], outbox?: SealedOutboxFields): Promise<Record<string, ResealCount>> {
  const out: Record<string, ResealCount> = {};
  if (outbox) out[`${db.outbox.table}.data`] = await resealOutbox(db, outbox);
  const em = db.fork();
  for (const c of columns) {
    const count: ResealCount = { resealed: 0, unreadable: 0 };
    out[`${c.table}.${c.column}`] = count;
    const access = db.type === 'mongodb' ? mongoAccess(em, db, c) : sqlAccess(em, db, c);
    let after: unknown;
    for (;;) {
      const rows = await access.batch(after);
      for (const row of rows) {
        const sealed = row[c.column];
        if (typeof sealed !== 'string' || !needsReseal(c.ring, sealed)) continue;
        let next: string | null;
        try {
          next = reseal(c.ring, sealed, c.aad?.(row));
        } catch {
          count.unreadable += 1;
          continue;
        }
        if (next !== null && (await access.write(row, next))) count.resealed += 1;
      }
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1]![c.key];
    }
  }
  return out;
}

export interface Resealer {
  /** one pass now (after the one in progress) */
  run(): Promise<Record<string, ResealCount>>;
  stop(): Promise<void>;
}

/**
 * The background resealer of one service: a pass shortly after start and then every `intervalMs`
 * (default 10 minutes). A pass that re-sealed anything logs the counts at `info`; unreadable values
 * log a `warn` naming the column (never a value); a failing pass logs once and is retried.
 */
export function startResealer(opts: { db: Database; columns: readonly SealedColumn[]; outbox?: SealedOutboxFields; logger: Logger; intervalMs?: number; firstPassMs?: number }): Resealer {
  const log = opts.logger.child({ component: 'resealer', service: opts.db.service });
  let failing = false;
  const pass = async (): Promise<Record<string, ResealCount>> => {
    try {
      const counts = await resealColumns(opts.db, opts.columns, opts.outbox);
      failing = false;
      if (Object.values(counts).some((n) => n.resealed > 0)) log.info({ counts }, 'values re-sealed under the first --encryption-key');
      for (const [column, n] of Object.entries(counts)) {
        if (n.unreadable > 0) log.warn({ column, unreadable: n.unreadable }, 'sealed values no --encryption-key opens');
      }
      return counts;
    } catch (err) {
      if (!failing) log.warn({ err }, 'reseal pass failed; retrying next period');
      failing = true;
      return {};
    }
  };
  const loop = startPeriodic(pass, opts.intervalMs ?? 600_000, {} as Record<string, ResealCount>);
  const first = setTimeout(() => void loop.run(), opts.firstPassMs ?? 5_000);
  first.unref?.();
  return {
    run: loop.run,
    async stop() {
      clearTimeout(first);
      await loop.stop();
    },
  };
}

/**
 * Sealed values inside the JSON `data` of a service's outbox rows (issue 32 §2): the secrets of the
 * delivery jobs (`email.send` links and codes, `sms.send` codes) that wait in the outbox until the relay
 * hands them to the bus (and, over the in-process bus, until the worker has run).
 */
export interface SealedOutboxFields {
  /** the ring the service seals its jobs with */
  readonly ring: KeyRing;
  /** event name → the fields of its `data` that hold sealed text */
  readonly fields: Readonly<Record<string, readonly string[]>>;
  /** the associated data a field of an event was sealed with, from the event's name and data */
  aad(name: string, data: Readonly<Record<string, unknown>>): string;
}

/**
 * Re-seals the sealed fields of one event's `data` (JSON text) under the ring's first key.
 * @returns the new JSON text (null when nothing needed it) and how many fields no key opens
 */
function resealData(s: SealedOutboxFields, name: string, text: string): { next: string | null; unreadable: number } {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { next: null, unreadable: 0 };
  }
  if (!data || typeof data !== 'object') return { next: null, unreadable: 0 };
  let changed = false;
  let unreadable = 0;
  for (const field of s.fields[name] ?? []) {
    const sealed = data[field];
    if (typeof sealed !== 'string' || sealed === '' || !needsReseal(s.ring, sealed)) continue;
    try {
      const next = reseal(s.ring, sealed, s.aad(name, data));
      if (next !== null) {
        data[field] = next;
        changed = true;
      }
    } catch {
      unreadable += 1;
    }
  }
  return { next: changed ? JSON.stringify(data) : null, unreadable };
}

/**
 * One pass over the service's outbox (SQL `<service>_outbox` rows; on MongoDB the `_outbox` entries of
 * every collection): every event named in `sealed.fields` whose sealed fields are not under the ring's
 * first key is re-sealed and written back while the row (entry) still holds the text read
 * (compare-and-set: an event the relay deleted meanwhile is simply gone). An event is counted once.
 *
 * @returns the events re-sealed and those with a field no key of the ring opens (counted under `<service>_outbox.data`)
 * @throws whatever the database throws
 */
export async function resealOutbox(db: Database, sealed: SealedOutboxFields): Promise<ResealCount> {
  const names = Object.keys(sealed.fields);
  const count: ResealCount = { resealed: 0, unreadable: 0 };
  if (names.length === 0) return count;
  const em = db.fork();
  if (db.type === 'mongodb') {
    const client = em as unknown as { getCollection(name: string): MongoCollection };
    const collections = [...new Set([...db.orm.getMetadata().getAll().values()].filter((m) => !m.embeddable && !m.virtual)
      .map((m) => m.collection).filter((c): c is string => typeof c === 'string'))].sort();
    for (const name of [...new Set([...collections, db.outbox.table])]) {
      const coll = client.getCollection(name);
      const docs = await coll.find({ [MONGO_OUTBOX_FIELD]: { $exists: true } }, { projection: { [MONGO_OUTBOX_FIELD]: 1 }, sort: { _id: 1 }, limit: 0 }).toArray();
      for (const d of docs) {
        for (const [id, e] of Object.entries((d[MONGO_OUTBOX_FIELD] ?? {}) as Record<string, MongoOutboxEntry>)) {
          if (!names.includes(e.name) || typeof e.data !== 'string') continue;
          const { next, unreadable } = resealData(sealed, e.name, e.data);
          if (unreadable > 0) count.unreadable += 1;
          const path = `${MONGO_OUTBOX_FIELD}.${id}.data`;
          if (next !== null && (await coll.updateOne({ _id: d._id, [path]: e.data }, { $set: { [path]: next } })).modifiedCount > 0) count.resealed += 1;
        }
      }
    }
    return count;
  }
  const conn = em.getConnection() as unknown as { execute(sql: string, params: unknown[], method: 'all' | 'run'): Promise<unknown> };
  const q = (n: string): string => quoteIdentifier(db.type, n);
  const table = q(db.outbox.table);
  let after = 0;
  for (;;) {
    const rows = (await conn.execute(
      `select ${q('seq')}, ${q('name')}, ${q('data')} from ${table} where ${q('name')} in (${names.map(() => '?').join(', ')}) and ${q('seq')} > ? order by ${q('seq')} limit ${BATCH}`,
      [...names, after], 'all')) as Row[];
    for (const row of rows) {
      const { next, unreadable } = resealData(sealed, String(row.name), String(row.data));
      if (unreadable > 0) count.unreadable += 1;
      if (next !== null && affected(await conn.execute(`update ${table} set ${q('data')} = ? where ${q('seq')} = ? and ${q('data')} = ?`, [next, row.seq, row.data], 'run')) > 0) count.resealed += 1;
    }
    if (rows.length < BATCH) break;
    after = Number(rows[rows.length - 1]!.seq);
  }
  return count;
}

/**
 * The delivery jobs' sealed fields ({@link SEALED_JOB_FIELDS}: `email.send`, `sms.send`) for a service
 * whose outbox holds them (authn, mfa), sealed under `ring` (`jobSealKey`).
 */
export function deliveryJobFields(ring: KeyRing): SealedOutboxFields {
  return { ring, fields: SEALED_JOB_FIELDS, aad: (name, data) => jobSecretAad(name, String(data.to ?? '')) };
}
