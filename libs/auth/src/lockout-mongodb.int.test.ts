/**
 * @module @gatehouse/auth/lockout-mongodb.int.test
 * The attempt slots' claim on MongoDB (FerretDB v1, started on a free 127.0.0.1 port by
 * libs/testing): the {@link slotAttemptLog} conformance suite, whose race test is issue 30 §1's
 * "N concurrent wrong attempts let exactly the threshold through" (behaviour.md §3.3 step 3, §4.4).
 */
import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { EntitySchema } from '@mikro-orm/core';
import { attemptSlotEntity, createMikroAttemptSlots, openDatabase, type Database } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { startFerretDb, type FerretDb } from '@gatehouse/testing';
import { runAttemptLogSuite } from './attempt-log.suite.ts';
import { slotAttemptLog, type AttemptLog } from './lockout.ts';

const entity = attemptSlotEntity('locktest');
let ferret: FerretDb;
let db: Database;
let log: AttemptLog;

beforeAll(async () => {
  ferret = await startFerretDb();
  db = await openDatabase({ type: 'mongodb', url: ferret.url(`gatehouse_${randomBytes(6).toString('hex')}`) },
    { service: 'locktest', entities: [entity] as unknown as EntitySchema<any, any>[], migrations: [] }, { logger: createLogger('silent') });
  log = slotAttemptLog(createMikroAttemptSlots(db, entity));
}, 60_000);
afterAll(async () => {
  await db?.close();
  await ferret?.stop();
});

runAttemptLogSuite('attempt slots on MongoDB (FerretDB)', () => log);
