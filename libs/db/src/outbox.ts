/**
 * @module @gatehouse/db/outbox
 * The transactional outbox (ARCHITECTURE §4): `<service>_outbox` rows written in the caller's
 * transaction, and the relay that publishes them through the Bus in `seq` order.
 */
import { defineEntity, p } from '@mikro-orm/core';
import type { EntityManager, EntitySchema } from '@mikro-orm/core';
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
 * The outbox collection for one service on MongoDB (`<service>_outbox`, issue 23): the envelope id is
 * the document `_id`, and `seq` a number that grows within a process (µs of the wall clock, or one
 * more than the last), which the relay orders by. No migration: MongoDB creates the collection on the
 * first insert.
 */
export function mongoOutboxEntity(service: string): EntitySchema<any, any> {
  return defineEntity({
    name: 'GatehouseOutbox',
    tableName: `${service}_outbox`,
    properties: {
      _id: p.uuid().primary(),
      seq: p.double(),
      name: p.string(),
      source: p.string(),
      occurredAt: p.double().fieldName('occurred_at'),
      data: p.text(),
      publishedAt: p.double().fieldName('published_at').nullable(),
      traceParent: p.string().fieldName('trace_parent').nullable(),
    },
  }) as unknown as EntitySchema<any, any>;
}

let lastMongoSeq = 0;
/** µs since the epoch, strictly growing within this process (< 2^53 until the year 2255). */
function nextMongoSeq(): number {
  lastMongoSeq = Math.max(Date.now() * 1000, lastMongoSeq + 1);
  return lastMongoSeq;
}

/**
 * The outbox of one service on MongoDB: `enqueue` persists through the caller's EntityManager, so the
 * document is written in the caller's flush (its transaction where the server has them).
 */
export function createMongoOutbox(service: string, entity: EntitySchema<any, any>): Outbox {
  return {
    table: `${service}_outbox`,
    enqueue(em: EntityManager, envelope: Envelope): void {
      em.persist(
        em.create(entity, {
          _id: envelope.id,
          seq: nextMongoSeq(),
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
