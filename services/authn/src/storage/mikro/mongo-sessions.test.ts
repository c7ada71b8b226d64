/**
 * authn's database SessionStore on MongoDB (FerretDB, the MongoDB wire protocol on SQLite), through the
 * same conformance suite as SQL and Redis: the issue 33 device and last-use fields, `listForUser` and
 * `touch` included, behave the same on a document store. Its own process: opening the entities on
 * MongoDB changes their key mapping for the rest of the process (see races.test.ts).
 */
import { afterAll, beforeAll, describe } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Database } from '@gatehouse/db';
import { runSessionStoreSuite } from '@gatehouse/auth/testing';
import { createLogger } from '@gatehouse/observability';
import { startFerretDb, type FerretDb } from '@gatehouse/testing';
import { authnSchema, createMikroAuthnStorage } from './index.ts';
import { SessionEntity } from './entities.ts';

describe('authn SessionStore on MongoDB (FerretDB)', () => {
  let ferret: FerretDb;
  let db: Database;
  let now = 1_800_000_000;
  beforeAll(async () => {
    ferret = await startFerretDb();
    db = await openDatabase({ type: 'mongodb', url: ferret.url(`gh_${randomBytes(6).toString('hex')}`) }, authnSchema, { logger: createLogger('silent') });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await ferret?.stop();
  });

  runSessionStoreSuite('authn database (mongodb)', async () => {
    await db.fork().nativeDelete(SessionEntity as never, {} as never);
    return { store: createMikroAuthnStorage(db, { clock: () => now }).sessions, advance: (s) => { now += s; }, now: () => now };
  });
});
