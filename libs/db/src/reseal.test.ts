/**
 * @module @gatehouse/db/reseal.test — the resealer (issue 32) on each SQL database: values sealed under
 * an older key of the ring (or before rings) are sealed again under the first key, values already there
 * are left, values no key opens are counted and kept, and two resealers at once lose nothing; the
 * delivery jobs waiting in an outbox are re-sealed too.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newEnvelope } from '@gatehouse/bus';
import { decrypt, deriveEncryptionKey, encrypt, openJobSecret, ringOf, sealJobSecret } from '@gatehouse/crypto';
import { createLogger } from '@gatehouse/observability';
import { createScratchDatabase, deliveryJobFields, openDatabase, resealColumns, resealOutbox, startResealer, type Database, type ScratchDatabase, type SealedColumn } from './index.ts';
import { testSchema } from './test-schema.ts';

const logger = createLogger('silent');
const OLD = 'old-encryption-key-of-32-characters';
const NEW = 'new-encryption-key-of-32-characters';
const GONE = 'a-key-that-left-the-ring-long-ago!!';
const RING = ringOf(NEW, OLD);
const aad = (id: string): string => `note:${id}`;
const COLUMN: SealedColumn = { table: 'dbtest_notes', key: 'id', column: 'body', ring: RING, aad: (row) => aad(String(row.id)) };

describe.each(['sqlite', 'postgres', 'mariadb'] as const)('resealColumns (%s)', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  let other: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, testSchema, { logger });
    other = await openDatabase(scratch.options, testSchema, { logger });
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await db?.close();
    await scratch?.drop();
  });

  /** plants `old` values under OLD (half of them v1, sealed before rings), `current` under NEW, `lost` under GONE */
  const plant = async (old: number, current: number, lost: number): Promise<Map<string, string>> => {
    await db.execute('delete from dbtest_notes');
    const plain = new Map<string, string>();
    const rows: Array<[string, string, number]> = [];
    const add = (seal: (id: string, text: string, i: number) => string, n: number, tag: string): void => {
      for (let i = 0; i < n; i += 1) {
        const id = randomUUID();
        const text = `${tag} secret ${i}`;
        plain.set(id, text);
        rows.push([id, seal(id, text, i), i]);
      }
    };
    add((id, t, i) => encrypt(i % 2 ? deriveEncryptionKey(OLD) : ringOf(OLD), t, aad(id)), old, 'old');
    add((id, t) => encrypt(ringOf(NEW), t, aad(id)), current, 'current');
    add((id, t) => encrypt(ringOf(GONE), t, aad(id)), lost, 'lost');
    for (let i = 0; i < rows.length; i += 100) {
      const chunk = rows.slice(i, i + 100);
      await db.execute(`insert into dbtest_notes (id, body, created_at) values ${chunk.map(() => '(?, ?, ?)').join(', ')}`, chunk.flat());
    }
    return plain;
  };
  const stored = async (): Promise<Map<string, string>> => new Map((await db.execute<{ id: string; body: string }>('select id, body from dbtest_notes')).map((r) => [r.id, r.body]));

  it('re-seals every value of an older key under the first, in batches; the old key can then go', async () => {
    const plain = await plant(450, 30, 2);
    expect(await resealColumns(db, [COLUMN])).toEqual({ 'dbtest_notes.body': { resealed: 450, unreadable: 2 } });
    const after = await stored();
    let lost = 0;
    for (const [id, text] of plain) {
      const body = after.get(id)!;
      if (text.startsWith('lost')) {
        lost += 1;
        expect(() => decrypt(RING, body, aad(id))).toThrow();
        continue;
      }
      // the ring without the old key opens everything
      expect(body.startsWith(`v2.${RING.keys[0].id}.`)).toBe(true);
      expect(decrypt(ringOf(NEW), body, aad(id))).toBe(text);
    }
    expect(lost).toBe(2);
    // a second pass finds nothing more to do
    expect(await resealColumns(db, [COLUMN])).toEqual({ 'dbtest_notes.body': { resealed: 0, unreadable: 2 } });
  }, 120_000);

  it('two resealers at once re-seal each value once (compare-and-set) and lose no write', async () => {
    const plain = await plant(300, 0, 0);
    const [a, b] = await Promise.all([resealColumns(db, [COLUMN]), resealColumns(other, [COLUMN])]);
    expect(a['dbtest_notes.body']!.resealed + b['dbtest_notes.body']!.resealed).toBe(300);
    for (const [id, body] of await stored()) expect(decrypt(ringOf(NEW), body, aad(id))).toBe(plain.get(id));
  }, 120_000);

  it('the background resealer runs a pass shortly after it starts', async () => {
    const plain = await plant(5, 0, 0);
    const r = startResealer({ db, columns: [COLUMN], logger, firstPassMs: 10, intervalMs: 3_600_000 });
    const deadline = Date.now() + 30_000;
    while ([...(await stored()).values()].some((b) => !b.startsWith(`v2.${RING.keys[0].id}.`)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    await r.stop();
    for (const [id, body] of await stored()) expect(decrypt(ringOf(NEW), body, aad(id))).toBe(plain.get(id));
  }, 60_000);
});

describe.each(['sqlite', 'postgres', 'mariadb'] as const)('resealOutbox: delivery jobs waiting in the outbox (%s)', (type) => {
  let scratch: ScratchDatabase;
  let db: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase(type);
    db = await openDatabase(scratch.options, testSchema, { logger });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('re-seals the sealed fields of email.send and sms.send under the first key, counts what no key opens, leaves other events', async () => {
    const email = (to: string, key: string) => ({ to, template: 'verify', sealed_variables: sealJobSecret(ringOf(key), 'email.send', to, JSON.stringify({ verification_url: `https://x/${to}` })) });
    const sms = (to: string, key: string) => ({ to, otp: '', sealed_otp: sealJobSecret(ringOf(key), 'sms.send', to, '123456') });
    const planted = [
      newEnvelope('email.send', 'dbtest', email('a@example.com', OLD) as never),
      newEnvelope('sms.send', 'dbtest', sms('+12015550123', OLD) as never),
      newEnvelope('email.send', 'dbtest', email('b@example.com', NEW) as never),
      newEnvelope('email.send', 'dbtest', email('c@example.com', GONE) as never),
      newEnvelope('user.created', 'dbtest', { user: { id: 'u', sealed_variables: 'not-a-job' } } as never),
    ];
    await db.transactional(async (em) => { for (const e of planted) db.outbox.enqueue(em, e); });
    const before = await db.execute<{ id: string; data: string }>(`select id, data from ${db.outbox.table}`);
    expect(await resealOutbox(db, deliveryJobFields(RING))).toEqual({ resealed: 2, unreadable: 1 });
    // a second pass has nothing left to do but the job no key opens
    expect(await resealOutbox(db, deliveryJobFields(RING))).toEqual({ resealed: 0, unreadable: 1 });
    const after = new Map((await db.execute<{ id: string; data: string }>(`select id, data from ${db.outbox.table}`)).map((r) => [r.id, JSON.parse(r.data) as Record<string, string>]));
    // the old key can go: the new key alone opens every job that was readable, for the same recipient
    const onlyNew = ringOf(NEW);
    expect(JSON.parse(openJobSecret(onlyNew, 'email.send', 'a@example.com', after.get(planted[0]!.id)!.sealed_variables!))).toEqual({ verification_url: 'https://x/a@example.com' });
    expect(openJobSecret(onlyNew, 'sms.send', '+12015550123', after.get(planted[1]!.id)!.sealed_otp!)).toBe('123456');
    const untouched = (i: number) => before.find((r) => r.id === planted[i]!.id)!.data;
    expect(JSON.stringify(after.get(planted[2]!.id))).toBe(untouched(2));
    expect(JSON.stringify(after.get(planted[3]!.id))).toBe(untouched(3));
    expect(JSON.stringify(after.get(planted[4]!.id))).toBe(untouched(4));
  });
});
