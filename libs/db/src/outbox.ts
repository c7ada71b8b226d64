/**
 * @module @gatehouse/db/outbox
 * The transactional outbox (ARCHITECTURE §4): `<service>_outbox` rows written in the caller's
 * transaction, and the relay that publishes them through the Bus in `seq` order.
 */
import { randomUUID } from 'node:crypto';
import { ChangeSetType, defineEntity, p } from '@mikro-orm/core';
import type { EntityManager, EntitySchema, FlushEventArgs } from '@mikro-orm/core';
import type { Envelope } from '@gatehouse/bus';
import type { MigrationDefinition, Outbox } from './types.ts';

/** The outbox entity for one service (table `<service>_outbox`). */
export function outboxEntity(service: string): EntitySchema<any, any> {
  return defineEntity({
    name: 'GatehouseOutbox',
    tableName: `${service}_outbox`,
    properties: {
      seq: p.bigint('number').primary().autoincrement(),
      id: p.uuid(),
      name: p.string().length(255),
      source: p.string().length(64),
      occurredAt: p.bigint('number').fieldName('occurred_at'),
      data: p.text(),
      publishedAt: p.bigint('number').fieldName('published_at').nullable(),
      traceParent: p.string().length(64).fieldName('trace_parent').nullable(),
    },
  }) as unknown as EntitySchema<any, any>;
}

/**
 * The outbox collection for one service on MongoDB (`<service>_outbox`, issue 23): a document of it
 * holds the events of one unit of work that changed no other document (its `_outbox` field, the same
 * map the changed documents carry; see {@link attachMongoOutbox}). No migration: MongoDB creates the
 * collection on the first insert.
 */
export function mongoOutboxEntity(service: string): EntitySchema<any, any> {
  return defineEntity({
    name: 'GatehouseOutbox',
    tableName: `${service}_outbox`,
    properties: {
      _id: p.uuid().primary(),
      events: p.json().fieldName(MONGO_OUTBOX_FIELD),
    },
  }) as unknown as EntitySchema<any, any>;
}

/** The field of a MongoDB document that holds its pending events: envelope id → {@link MongoOutboxEntry}. */
export const MONGO_OUTBOX_FIELD = '_outbox';

/** One pending event as a MongoDB document stores it (the SQL row's columns; `data` is the JSON text). */
export interface MongoOutboxEntry {
  /** µs since the epoch, strictly growing within a process: the relay's order */
  seq: number;
  name: string;
  source: string;
  occurred_at: number;
  data: string;
  trace_parent: string | null;
}

let lastMongoSeq = 0;
/** µs since the epoch, strictly growing within this process (< 2^53 until the year 2255). */
export function nextMongoSeq(): number {
  lastMongoSeq = Math.max(Date.now() * 1000, lastMongoSeq + 1);
  return lastMongoSeq;
}

/** Events enqueued on an EntityManager and not yet written (MongoDB): the next flush of that manager writes them. */
const pendingMongoEvents = new WeakMap<EntityManager, Map<string, MongoOutboxEntry>>();

/**
 * The outbox of one service on MongoDB: `enqueue` holds the envelope on the caller's EntityManager,
 * and that manager's next flush writes it inside a document the flush writes anyway (the
 * single-document pattern, {@link attachMongoOutbox}), so the event is stored by the same
 * single-document write as the state change, or not at all.
 */
export function createMongoOutbox(service: string): Outbox {
  return {
    table: `${service}_outbox`,
    enqueue(em: EntityManager, envelope: Envelope): void {
      const pending = pendingMongoEvents.get(em) ?? new Map<string, MongoOutboxEntry>();
      pendingMongoEvents.set(em, pending);
      pending.set(envelope.id, {
        seq: nextMongoSeq(),
        name: envelope.name,
        source: envelope.source,
        occurred_at: envelope.occurredAt,
        data: JSON.stringify(envelope.data ?? null),
        trace_parent: envelope.traceparent ?? null,
      });
    },
  };
}

/**
 * The single-document pattern (issue 23), run as MikroORM's `onFlush` on MongoDB: the events
 * enqueued on the flushing EntityManager are added to the first document the flush inserts (as its
 * `_outbox` map) or updates (one `$set` of `_outbox.<envelope id>` per event, which leaves the
 * events another unit of work left there untouched). MongoDB writes one document atomically, so
 * that document's change and the events are stored together or not at all; the relay publishes
 * them and `$unset`s each once the bus acknowledged it. A flush that inserts or updates no document
 * (nothing, or only deletes) writes the events as one new `<service>_outbox` document instead.
 * Inside a MongoDB transaction (replica set) the same write simply joins the transaction.
 */
export function attachMongoOutbox(outboxEntity: EntitySchema<any, any>): (args: FlushEventArgs) => void {
  return ({ em, uow }) => {
    const pending = pendingMongoEvents.get(em);
    if (!pending || pending.size === 0) return;
    pendingMongoEvents.delete(em);
    const anchor = uow.getChangeSets().find((cs) => cs.type === ChangeSetType.CREATE || cs.type === ChangeSetType.UPDATE);
    if (anchor?.type === ChangeSetType.CREATE) {
      (anchor.payload as Record<string, unknown>)[MONGO_OUTBOX_FIELD] = Object.fromEntries(pending);
      return;
    }
    if (anchor) {
      for (const [id, entry] of pending) (anchor.payload as Record<string, unknown>)[`${MONGO_OUTBOX_FIELD}.${id}`] = entry;
      return;
    }
    const doc = em.create(outboxEntity, { _id: randomUUID(), events: Object.fromEntries(pending) });
    em.persist(doc);
    uow.computeChangeSet(doc);
  };
}

/** The migration that creates `<service>_outbox`; prepended to every service's own list. */
export function outboxMigration(service: string): MigrationDefinition {
  const table = `${service}_outbox`;
  return {
    name: `0000_${service}_outbox`,
    async up({ ddl }) {
      await ddl.createTable(table, [
        { name: 'seq', type: 'serial' },
        { name: 'id', type: 'uuid' },
        { name: 'name', type: 'string' },
        { name: 'source', type: 'string', length: 64 },
        { name: 'occurred_at', type: 'bigint' },
        { name: 'data', type: 'text' },
        { name: 'published_at', type: 'bigint', nullable: true },
      ]);
      await ddl.createIndex(table, `${table}_pending_idx`, ['published_at', 'seq']);
    },
  };
}

/**
 * The migration that adds `trace_parent` (W3C `traceparent`, 55 characters) to `<service>_outbox`,
 * so the relay's publish continues the trace of the request that wrote the row (issue 15).
 */
export function outboxTraceMigration(service: string): MigrationDefinition {
  return {
    name: `0000_${service}_outbox_trace_parent`,
    async up({ ddl }) {
      await ddl.addColumn(`${service}_outbox`, { name: 'trace_parent', type: 'string', length: 64, nullable: true });
    },
  };
}

/** The outbox of one service: `enqueue` persists through the caller's EntityManager. */
export function createOutbox(service: string, entity: EntitySchema<any, any>): Outbox {
  return {
    table: `${service}_outbox`,
    enqueue(em: EntityManager, envelope: Envelope): void {
      em.persist(
        em.create(entity, {
          id: envelope.id,
          name: envelope.name,
          source: envelope.source,
          occurredAt: envelope.occurredAt,
          data: JSON.stringify(envelope.data ?? null),
          publishedAt: null,
          traceParent: envelope.traceparent ?? null,
        }),
      );
    },
  };
}
