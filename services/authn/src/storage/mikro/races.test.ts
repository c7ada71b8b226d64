/**
 * Issue 32 §4: email and phone uniqueness holds under concurrency on every database, MongoDB
 * (FerretDB) included, where it rests on the identifier claims (`claims.ts`), not on an index.
 * MongoDB runs last: opening the entities there changes their key mapping for the rest of the process.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { createScratchDatabase, openDatabase, type Database, type DatabaseType, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { startFerretDb } from '@gatehouse/testing';
import { PASSWORD, makeAuthn } from '../../fixture.ts';
import { authnSchema, createMikroAuthnStorage, type MikroAuthnStorage } from './index.ts';
import { CLAIMS_COLLECTION, CLAIM_STALE_MS, claimId } from './claims.ts';
import { UserEntity } from './entities.ts';

const ADMIN = { 'x-service-admin-secret': 'admin-secret' };
const N = 20;

async function scratchOf(type: DatabaseType): Promise<ScratchDatabase> {
  if (type !== 'mongodb') return createScratchDatabase(type);
  const ferret = await startFerretDb();
  return { options: { type, url: ferret.url(`gh_${randomBytes(6).toString('hex')}`) }, drop: () => ferret.stop() };
}

/**
 * authn's storage with a gap of `gapMs` between each uniqueness check and what follows it, so that
 * concurrent requests all check before any of them writes: only the locking or claiming can keep them
 * apart (without it every one of them would create an account).
 */
function widened(storage: MikroAuthnStorage, gapMs = 30): MikroAuthnStorage {
  const users = storage.users;
  const slow = <A extends unknown[], R>(f: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    const r = await f(...args);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
    return r;
  };
  return {
    ...storage,
    users: {
      ...users,
      transaction: (fn) => users.transaction((tx) => fn({ ...tx, users: { ...tx.users, findByEmail: slow(tx.users.findByEmail), findByPhone: slow(tx.users.findByPhone) } })),
    },
  };
}

type Settled = PromiseSettledResult<unknown>;
const errorsOf = (results: Settled[]) => results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => ({ code: r.reason?.code, message: r.reason?.message }));

describe.each(['sqlite', 'postgres', 'mariadb', 'mongodb'] as const)('concurrent identifiers on %s', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  let a: ReturnType<typeof makeAuthn>;
  beforeAll(async () => {
    scratch = await scratchOf(type);
    db = await openDatabase(scratch.options, authnSchema, { logger: createLogger('silent') });
    a = makeAuthn({}, { storage: (clock) => widened(createMikroAuthnStorage(db, { clock })) });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  const countUsers = async (where: Record<string, string>) => db.fork().count(authnSchema.entities[0]!, where as never);

  it(`${N} concurrent signups with one email give exactly one account`, async () => {
    const email = `race-${randomUUID().slice(0, 8)}@example.com`;
    // the addresses differ in case and spaces only: one normalised address
    const results = await Promise.allSettled(Array.from({ length: N }, (_, i) => a.call('Signup', { email: i % 2 ? email.toUpperCase() : ` ${email}`, password: PASSWORD, confirm_password: PASSWORD })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(errorsOf(results)).toEqual(Array(N - 1).fill({ code: 'invalid_argument', message: 'user with given email already exists' }));
    expect(await countUsers({ email })).toBe(1);
  }, 60_000);

  it(`${N} concurrent signups with one phone number give exactly one account`, async () => {
    const phone = `+1202555${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
    const results = await Promise.allSettled(Array.from({ length: N }, () => a.call('Signup', { phone_number: phone, password: PASSWORD, confirm_password: PASSWORD })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(errorsOf(results)).toEqual(Array(N - 1).fill({ code: 'invalid_argument', message: 'user with given phone number already exists' }));
    expect(await countUsers({ phoneNumber: phone })).toBe(1);
  }, 60_000);

  it('update_profile to an address others take at the same time: exactly one holder', async () => {
    const tag = randomUUID().slice(0, 8);
    const users = [];
    for (let i = 0; i < 5; i++) users.push(await a.signup(`upd-${tag}-${i}@example.com`));
    const target = `taken-${tag}@example.com`;
    const results = await Promise.allSettled([
      ...users.map((u) => a.call('UpdateProfile', { email: target }, u.bearer)),
      ...Array.from({ length: 5 }, () => a.call('Signup', { email: target, password: PASSWORD, confirm_password: PASSWORD })),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(errorsOf(results).map((e) => e.message)).toEqual(Array(9).fill('user with given email already exists'));
    expect(await countUsers({ email: target })).toBe(1);
    // and sequentially: a taken address is refused with the contract's answer
    const late = await a.signup(`late-${tag}@example.com`);
    await expect(a.call('UpdateProfile', { email: target }, late.bearer)).rejects.toMatchObject({ code: 'already_exists', message: 'user with given email already exists' });
  }, 60_000);

  it('frees an address when its user is deleted or changes it', async () => {
    const tag = randomUUID().slice(0, 8);
    const first = await a.signup(`free-${tag}@example.com`);
    await a.call('DeleteUser', { id: first.res.user.id }, ADMIN);
    const second = await a.signup(`free-${tag}@example.com`);
    await a.call('UpdateProfile', { email: `moved-${tag}@example.com` }, second.bearer);
    await a.signup(`free-${tag}@example.com`);
    expect(await countUsers({ email: `free-${tag}@example.com` })).toBe(1);
    expect(await countUsers({ email: `moved-${tag}@example.com` })).toBe(1);
  }, 60_000);

  if (type === 'mongodb') {
    const claims = () => (db.fork() as unknown as { getCollection(n: string): any }).getCollection(CLAIMS_COLLECTION);

    it('keeps one settled claim per stored address and none for a released one', async () => {
      const tag = randomUUID().slice(0, 8);
      const u = await a.signup(`claim-${tag}@example.com`);
      expect(await claims().findOne({ _id: claimId('email', `claim-${tag}@example.com`) })).toMatchObject({ user_id: u.res.user.id });
      await a.call('UpdateProfile', { email: `claim2-${tag}@example.com` }, u.bearer);
      expect(await claims().findOne({ _id: claimId('email', `claim-${tag}@example.com`) })).toBeNull();
      expect(await claims().findOne({ _id: claimId('email', `claim2-${tag}@example.com`) })).toMatchObject({ user_id: u.res.user.id });
      // a refused signup leaves no claim of its own behind
      await expect(a.signup(`claim2-${tag}@example.com`)).rejects.toMatchObject({ message: 'user with given email already exists' });
      expect(await claims().findOne({ _id: claimId('email', `claim2-${tag}@example.com`) })).toMatchObject({ user_id: u.res.user.id });
    });

    it('stores the user\'s int64 fields as BSON numbers', async () => {
      const u = await a.signup(`int64-${randomUUID().slice(0, 8)}@example.com`);
      const doc = await (db.fork() as unknown as { getCollection(n: string): any }).getCollection('authn_users').findOne({ _id: u.res.user.id });
      expect(doc).toMatchObject({ created_at: expect.any(Number), updated_at: expect.any(Number), email_verified_at: expect.any(Number) });
      expect(typeof doc.created_at).toBe('number');
    });

    it('takes over the claim of a unit of work that crashed before writing its user, once stale', async () => {
      const tag = randomUUID().slice(0, 8);
      const email = `crash-${tag}@example.com`;
      // what a process killed between the claim and the user insert leaves behind
      await claims().insertOne({ _id: claimId('email', email), owner: randomUUID(), user_id: null, claimed_at: Date.now() - CLAIM_STALE_MS - 1 });
      const u = await a.signup(email);
      expect(await countUsers({ email })).toBe(1);
      expect(await claims().findOne({ _id: claimId('email', email) })).toMatchObject({ user_id: u.res.user.id });
      // a settled claim whose user is gone (its release lost) is taken over at once
      const gone = `gone-${tag}@example.com`;
      await claims().insertOne({ _id: claimId('email', gone), owner: randomUUID(), user_id: randomUUID(), claimed_at: Date.now() });
      const started = Date.now();
      await a.signup(gone);
      expect(Date.now() - started).toBeLessThan(CLAIM_STALE_MS);
      expect(await countUsers({ email: gone })).toBe(1);
    });

    it('writes user.deleted before the deletes: a failure between them loses no event (single-document MongoDB)', async () => {
      expect(db.mongoAtomicity).toBe('single-document');
      const u = await a.signup(`del-${randomUUID().slice(0, 8)}@example.com`);
      const id = u.res.user.id as string;
      const deletedEvents = async () => {
        const docs = await (db.fork() as unknown as { getCollection(n: string): any }).getCollection('authn_outbox').find({}).toArray() as { _outbox?: Record<string, { name: string; data: string }> }[];
        return docs.flatMap((d) => Object.values(d._outbox ?? {})).filter((e) => e.name === 'user.deleted' && (JSON.parse(e.data) as { user: { id: string } }).user.id === id);
      };
      // the process fails after the event's write, at the delete of the user document
      const proto = Object.getPrototypeOf(db.fork()) as { nativeDelete: (...args: unknown[]) => Promise<number> };
      const real = proto.nativeDelete;
      const spy = jest.spyOn(proto, 'nativeDelete').mockImplementation(function (this: unknown, ...args: unknown[]) {
        if (args[0] === UserEntity) return Promise.reject(new Error('process killed'));
        return real.apply(this, args);
      });
      try {
        await expect(a.call('DeleteUser', { id }, ADMIN)).rejects.toBeDefined();
      } finally {
        spy.mockRestore();
      }
      expect(await deletedEvents()).toHaveLength(1);
      expect(await countUsers({ id })).toBe(1);
      // delete_user again finishes the deletion; consumers of user.deleted remove by user id (idempotent)
      await a.call('DeleteUser', { id }, ADMIN);
      expect(await countUsers({ id })).toBe(0);
      expect(await deletedEvents()).toHaveLength(2);
    });

    it('waits for a fresh claim of a running unit of work instead of taking it', async () => {
      const email = `busy-${randomUUID().slice(0, 8)}@example.com`;
      const owner = randomUUID();
      await claims().insertOne({ _id: claimId('email', email), owner, user_id: null, claimed_at: Date.now() });
      const pending = a.signup(email);
      await new Promise((r) => setTimeout(r, 300));
      expect(await countUsers({ email })).toBe(0);
      // the running unit of work gives up: the waiter proceeds
      await claims().deleteOne({ _id: claimId('email', email), owner });
      await pending;
      expect(await countUsers({ email })).toBe(1);
    });
  }
});
