/**
 * @module orgs/storage/mikro/outbox
 * Events written to orgs' outbox inside the caller's transaction (issue 32 §1): an audit row or a domain
 * event commits with the change it describes, or not at all, and the relay takes it to the bus.
 */
import { newEnvelope } from '@gatehouse/bus';
import type { Database } from '@gatehouse/db';
import type { OutboxEvent } from '../ports.ts';

/** The EntityManager a `db.transactional` callback receives. */
export type TxManager = Parameters<Parameters<Database['transactional']>[0]>[0];

/**
 * Enqueues `events` on `em`, each as a new envelope from `orgs`; they are stored by the transaction of
 * `em` (on MongoDB by its next flush, libs/db `attachMongoOutbox`).
 * @param occurredAt the envelopes' time; absent: now
 */
export function enqueueEvents(db: Database, em: TxManager, events: readonly OutboxEvent[], occurredAt?: number): void {
  for (const e of events) {
    const envelope = newEnvelope(e.name as never, 'orgs', e.data as never);
    db.outbox.enqueue(em, occurredAt === undefined ? envelope : { ...envelope, occurredAt });
  }
}
