/**
 * @module @gatehouse/db/attempt-slots
 * Attempt slots: the storage under every attempt counter that must hold against concurrent callers
 * (the password, OTP and TOTP lockouts, the send caps; issue 30 §1-§2). A key owns `max` slots, each
 * holding the time of the attempt that last claimed it (0 = never). An attempt claims a slot whose
 * time has left the window with one conditional write (`UPDATE … SET at = now WHERE id = slot AND
 * at = <the time read>`; on MongoDB the insert of the slot's next version, whose `_id` is unique): of N
 * concurrent claims on the same slot exactly one changes a row, so at most `max` attempts are admitted
 * per window on SQLite, PostgreSQL, MySQL/MariaDB and MongoDB alike, across any number of processes,
 * without a transaction or a read-then-write race.
 */
import { defineEntity, p, UniqueConstraintViolationException, type EntitySchema } from '@mikro-orm/core';
import type { Ddl } from './ddl.ts';
import type { Database } from './types.ts';

/** One slot as stored: `id` is `<key>#<slot number>`. */
export interface AttemptSlot {
  /** 0-based slot number */
  slot: number;
  /** Unix seconds of the attempt that claimed it; 0 when never claimed or released */
  at: number;
}

/** What the claim algorithm of @gatehouse/auth (`slotAttemptLog`) needs from storage. */
export interface AttemptSlots {
  /** the key's slots (any order); missing slots are simply absent */
  read(key: string): Promise<AttemptSlot[]>;
  /** creates the given slots with `at = 0`; a slot another caller created first is left alone */
  create(key: string, slots: readonly number[]): Promise<void>;
  /** sets the slot's time to `to` only when it is still `from`; true when this call changed it */
  swap(key: string, slot: number, from: number, to: number): Promise<boolean>;
  /** frees every slot of the key */
  clear(key: string): Promise<void>;
}

/**
 * How long a slot row is kept after its last claim: the longest window any counter uses (the daily
 * send caps). An older row counts for nothing; the sweeper deletes it and the next claim recreates it.
 */
export const ATTEMPT_SLOT_RETENTION_SECONDS = 24 * 3600;

/** Longest key a slot table holds (a sha256 hex digest plus a short prefix fits easily). */
export const ATTEMPT_KEY_MAX_CHARS = 128;

/**
 * The slot entity of one service's `<service>_attempt_slots` table (columns `id`, `attempt_key`,
 * `attempted_at`); create the table with {@link attemptSlotsTable} in a migration.
 */
export function attemptSlotEntity(service: string): EntitySchema<any, any> {
  return defineEntity({
    name: `${service[0]!.toUpperCase()}${service.slice(1)}AttemptSlot`,
    tableName: `${service}_attempt_slots`,
    properties: {
      id: p.string().primary().length(ATTEMPT_KEY_MAX_CHARS + 8),
      key: p.string().length(ATTEMPT_KEY_MAX_CHARS).fieldName('attempt_key'),
      at: p.bigint('number').fieldName('attempted_at'),
    },
  }) as unknown as EntitySchema<any, any>;
}

/** The migration body creating `<service>_attempt_slots` (see {@link attemptSlotEntity}). */
export async function attemptSlotsTable(ddl: Ddl, service: string): Promise<void> {
  const table = `${service}_attempt_slots`;
  await ddl.createTable(table, [
    { name: 'id', type: 'string', length: ATTEMPT_KEY_MAX_CHARS + 8, primary: true },
    { name: 'attempt_key', type: 'string', length: ATTEMPT_KEY_MAX_CHARS },
    { name: 'attempted_at', type: 'bigint' },
  ]);
  await ddl.createIndex(table, `${table}_key_idx`, ['attempt_key']);
  await ddl.createIndex(table, `${table}_at_idx`, ['attempted_at']);
}

const slotId = (key: string, slot: number): string => `${key}#${slot}`;

/**
 * {@link AttemptSlots} on `entity` (from {@link attemptSlotEntity}) of `db`. Every method is one
 * statement on a fresh EntityManager, outside any transaction. On MongoDB the swap is an insert
 * instead ({@link createMongoAttemptSlots}).
 */
export function createMikroAttemptSlots(db: Database, entity: EntitySchema<any, any>): AttemptSlots {
  if (db.type === 'mongodb') return createMongoAttemptSlots(db, entity);
  return {
    async read(key) {
      const rows = await db.fork().find(entity, { key } as never) as Array<{ id: string; at: unknown }>;
      return rows.map((r) => ({ slot: Number(r.id.slice(key.length + 1)), at: Number(r.at) }));
    },
    async create(key, slots) {
      for (const slot of slots) {
        try {
          await db.fork().insert(entity, { id: slotId(key, slot), key, at: 0 } as never);
        } catch (err) {
          if (!(err instanceof UniqueConstraintViolationException)) throw err;
        }
      }
    },
    async swap(key, slot, from, to) {
      return (await db.fork().nativeUpdate(entity, { id: slotId(key, slot), at: from } as never, { at: to } as never)) === 1;
    },
    async clear(key) {
      await db.fork().nativeDelete(entity, { key } as never);
    },
  };
}

/** A slot's version as stored on MongoDB: `<key>#<slot>` is generation 0, `<key>#<slot>.<n>` generation n. */
const versionId = (key: string, slot: number, generation: number): string => generation === 0 ? slotId(key, slot) : `${slotId(key, slot)}.${generation}`;

/**
 * {@link AttemptSlots} for MongoDB. A conditional `updateOne` is not a compare-and-swap on every
 * server that speaks the protocol: FerretDB v1 reads the matching document and then writes it, so
 * N concurrent `{_id, at: from}` updates can all report a modified document (issue 30 §1: 38 of 50
 * wrong passwords were compared). An insert is atomic on all of them (the `_id` is unique), so here a
 * slot is a series of immutable versions: taking a slot inserts the version after the one read, and of
 * concurrent takers exactly one insert succeeds; older versions are then deleted. `read` answers each
 * slot's newest version.
 */
function createMongoAttemptSlots(db: Database, entity: EntitySchema<any, any>): AttemptSlots {
  /** every stored version of the key's slots, as slot, generation and time */
  const versions = async (key: string): Promise<Array<{ id: string; slot: number; generation: number; at: number }>> => {
    const rows = await db.fork().find(entity, { key } as never) as Array<{ id: string; at: unknown }>;
    return rows.map((r) => {
      const [slot, generation] = r.id.slice(key.length + 1).split('.').map(Number) as [number, number | undefined];
      return { id: r.id, slot, generation: generation ?? 0, at: Number(r.at) };
    });
  };
  /** the newest version of each slot */
  const newest = (all: Awaited<ReturnType<typeof versions>>): Map<number, { generation: number; at: number }> => {
    const out = new Map<number, { generation: number; at: number }>();
    for (const v of all) if ((out.get(v.slot)?.generation ?? -1) < v.generation) out.set(v.slot, v);
    return out;
  };
  const insert = async (id: string, key: string, at: number): Promise<boolean> => {
    try {
      await db.fork().insert(entity, { id, key, at } as never);
      return true;
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) return false;
      throw err;
    }
  };
  return {
    async read(key) {
      return [...newest(await versions(key))].map(([slot, v]) => ({ slot, at: v.at }));
    },
    async create(key, slots) {
      for (const slot of slots) await insert(versionId(key, slot, 0), key, 0);
    },
    async swap(key, slot, from, to) {
      const all = await versions(key);
      const current = newest(all).get(slot);
      if (!current || current.at !== from) return false;
      if (!(await insert(versionId(key, slot, current.generation + 1), key, to))) return false;
      const older = all.filter((v) => v.slot === slot && v.generation <= current.generation).map((v) => v.id);
      await db.fork().nativeDelete(entity, { id: { $in: older } } as never);
      return true;
    },
    async clear(key) {
      await db.fork().nativeDelete(entity, { key } as never);
    },
  };
}
