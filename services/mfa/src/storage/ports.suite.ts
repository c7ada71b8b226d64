/**
 * @module @gatehouse/mfa/storage/ports.suite
 * Conformance suite every {@link MfaStore} implementation passes (STYLE §8): memory, SQLite (unit
 * run), PostgreSQL and MariaDB (integration run). Titles use behaviour.md §4.2 (MFA session) and
 * §4.4 (email/SMS OTP, lockout).
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { claimAttempt } from '@gatehouse/auth';
import { runAttemptLogSuite } from '@gatehouse/auth/attempt-log-suite';
import type { Envelope } from '@gatehouse/bus';
import type { common } from '@gatehouse/contracts';
import type { MfaSessionRecord, MfaStore, OtpChannel, OtpRecord, RecoveryCodeRecord, TotpRecord } from './ports.ts';

export interface MfaStoreHandle {
  readonly store: MfaStore;
  /** every envelope committed so far, in commit order (the rows of `mfa_outbox`) */
  outbox(): Promise<Envelope[]>;
  close(): Promise<void>;
}


/** A User record as the codec shapes it (every field present), with `over` set. */
function wireUser(over: Partial<common.User>): common.User {
  return {
    id: 'u', email: null, email_verified: false, signup_methods: 'basic_auth', given_name: null, family_name: null, middle_name: null,
    nickname: null, preferred_username: null, gender: null, birthdate: null, phone_number: null, phone_number_verified: false,
    picture: null, roles: [], created_at: 1_700_000_000, updated_at: 1_700_000_000, revoked_timestamp: null,
    is_multi_factor_auth_enabled: null, has_skipped_mfa_setup_at: null, mfa_locked_at: null, enrolled_mfa_methods: [], app_data: null,
    ...over,
  };
}
/** `open` gets the clock (Unix seconds) the store must stamp on the envelopes it writes. */
export type OpenMfaStore = (clock: () => number) => Promise<MfaStoreHandle>;

/** A year-2100 time: past 2^31, so 32-bit columns would not hold it. */
const Y2100 = 4_102_444_800;

const hashOf = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Registers the suite for one implementation. `open` runs once in beforeAll; tests share the store. */
export function describeMfaStore(name: string, open: OpenMfaStore): void {
  describe(`MfaStore conformance: ${name}`, () => {
    let handle: MfaStoreHandle;
    let store: MfaStore;
    let now = 1_800_000_000;
    beforeAll(async () => {
      handle = await open(() => now);
      store = handle.store;
    });
    afterAll(async () => {
      await handle?.close();
    });
    beforeEach(() => {
      now += 3600;
    });

    const session = (over: Partial<MfaSessionRecord> = {}): MfaSessionRecord => ({
      id: randomUUID(),
      handleHash: hashOf(randomUUID()),
      userId: `u-${randomUUID()}`,
      purpose: 'login',
      channel: 'email',
      contact: 'ada@example.com',
      user: wireUser({ id: 'u-1', email: 'ada@example.com', roles: ['user'], phone_number: null, app_data: { plan: 'pro', seats: [1, 'two'] } }),
      loginMethod: 'basic_auth',
      roles: ['user', 'editor'],
      scope: ['openid', 'email', 'offline_access'],
      state: 'st-1',
      authTime: now - 5,
      expiresAt: now + 300,
      createdAt: now,
      ...over,
    });
    const otp = (userId: string, channel: OtpChannel = 'email', over: Partial<OtpRecord> = {}): OtpRecord => ({
      userId, channel, digest: hashOf(`${userId}:${channel}:${randomUUID()}`), expiresAt: now + 300, sentAt: now, ...over,
    });
    /** creates the sessions in one transaction */
    const create = (...sessions: MfaSessionRecord[]) => store.transaction(async (tx) => {
      for (const s of sessions) await tx.sessions.create(s);
    });
    const put = (o: OtpRecord) => store.transaction((tx) => tx.otps.put(o));
    /** envelopes committed by `fn`, given that nothing else commits meanwhile */
    const committedBy = async (fn: () => Promise<unknown>): Promise<Envelope[]> => {
      const before = (await handle.outbox()).length;
      await fn();
      return (await handle.outbox()).slice(before);
    };

    describe('MFA session (behaviour.md §4.2)', () => {
      it('stores the user id, purpose, OTP channel, stored scope, roles, login method, state and expiry, and finds the session by its cookie handle', async () => {
        const s = session({ authTime: Y2100 - 60, createdAt: Y2100 - 10, expiresAt: Y2100 + 290 });
        await create(s);
        expect(await store.findSessionByHandleHash(s.handleHash)).toEqual(s);
      });

      it('stores a session with OTP channel none (TOTP, passkeys) with its nulls and empty lists as such', async () => {
        const s = session({ purpose: 'password_reset', channel: null, contact: null, state: null, roles: [], scope: [], user: wireUser({ id: 'u-2', email: null }) });
        await create(s);
        expect(await store.findSessionByHandleHash(s.handleHash)).toEqual(s);
      });

      it('finds a session only by the SHA-256 of its own cookie handle', async () => {
        const a = session();
        const b = session({ userId: a.userId });
        await create(a, b);
        expect((await store.findSessionByHandleHash(a.handleHash))?.id).toBe(a.id);
        expect((await store.findSessionByHandleHash(b.handleHash))?.id).toBe(b.id);
        expect(await store.findSessionByHandleHash(hashOf('unknown handle'))).toBeNull();
        expect(await store.findSessionByHandleHash(a.id)).toBeNull();
      });

      it('refuses a second session with the same cookie handle, and keeps the first', async () => {
        const first = session();
        await create(first);
        await expect(create(session({ handleHash: first.handleHash }))).rejects.toThrow();
        expect(await store.findSessionByHandleHash(first.handleHash)).toEqual(first);
      });

      it('stores the expiry as given, even one already past: expiry is checked on every read', async () => {
        const s = session({ expiresAt: now - 1 });
        await create(s);
        expect(await store.findSessionByHandleHash(s.handleHash)).toMatchObject({ expiresAt: now - 1 });
      });

      it('re-arms a session: the new expiry replaces the old and nothing else changes', async () => {
        const s = session();
        await create(s);
        await store.transaction((tx) => tx.sessions.rearm(s.id, Y2100));
        expect(await store.findSessionByHandleHash(s.handleHash)).toEqual({ ...s, expiresAt: Y2100 });
        // re-arming a session that is gone is no error
        await store.transaction((tx) => tx.sessions.rearm(randomUUID(), Y2100));
      });

      it('single use: deleting the session answers true, then false once it is gone', async () => {
        const s = session();
        const other = session({ userId: s.userId });
        await create(s, other);
        expect(await store.transaction((tx) => tx.sessions.delete(s.id))).toBe(true);
        expect(await store.findSessionByHandleHash(s.handleHash)).toBeNull();
        expect(await store.transaction((tx) => tx.sessions.delete(s.id))).toBe(false);
        expect(await store.findSessionByHandleHash(other.handleHash)).toEqual(other);
      });

      it('single use: of concurrent completions of one session exactly one deletes it, and only its events commit', async () => {
        const s = session();
        await create(s);
        await put(otp(s.userId));
        const complete = (n: number) => store.transaction(async (tx) => {
          if (!(await tx.sessions.delete(s.id))) return false;
          await tx.otps.delete(s.userId, 'email');
          tx.events.emit('mfa.completed', { session: s.id, n });
          return true;
        });
        let results: boolean[] = [];
        const events = await committedBy(async () => {
          results = await Promise.all([1, 2, 3, 4, 5].map(complete));
        });
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ name: 'mfa.completed', data: { session: s.id, n: results.indexOf(true) + 1 } });
        expect(await store.findOtp(s.userId, 'email')).toBeNull();
      });

      it('opens MFA sessions for many logins at once', async () => {
        // Each round opens its sessions before the earlier rounds' expiry, so a store that drops expired
        // sessions on create finds none to drop: the case where InnoDB's REPEATABLE READ locks the empty
        // range, every insert of the round falls into it, and concurrent creates deadlock.
        for (let round = 1; round <= 20; round++) {
          const at = Y2100 - 1_000_000 - round * 1000;
          const many = Array.from({ length: 8 }, () => session({ authTime: at, createdAt: at, expiresAt: at + 300 }));
          await Promise.all(many.map((s) => create(s)));
          for (const s of many) expect(await store.findSessionByHandleHash(s.handleHash)).toEqual(s);
        }
      });
    });

    describe('email/SMS OTP (behaviour.md §4.4)', () => {
      it('one live code per user and channel: a new code replaces the old one', async () => {
        const userId = `u-${randomUUID()}`;
        const old = otp(userId);
        await put(old);
        expect(await store.findOtp(userId, 'email')).toEqual(old);
        const next = otp(userId, 'email', { expiresAt: Y2100, sentAt: Y2100 - 300 });
        await put(next);
        expect(await store.findOtp(userId, 'email')).toEqual(next);
      });

      it('a new code replaces the old one within one transaction too, and a deleted one stays deleted', async () => {
        const userId = `u-${randomUUID()}`;
        const gone = `u-${randomUUID()}`;
        const last = otp(userId, 'email', { sentAt: now + 3 });
        await store.transaction(async (tx) => {
          await tx.otps.put(otp(userId));
          await tx.otps.put(otp(userId, 'email', { sentAt: now + 1 }));
          await tx.otps.delete(userId, 'email');
          await tx.otps.put(last);
          await tx.otps.put(otp(gone, 'sms'));
          await tx.otps.delete(gone, 'sms');
        });
        expect(await store.findOtp(userId, 'email')).toEqual(last);
        expect(await store.findOtp(gone, 'sms')).toBeNull();
      });

      it('one live code per user and channel when several codes are stored at once', async () => {
        const userId = `u-${randomUUID()}`;
        const codes = [otp(userId), otp(userId), otp(userId), otp(userId)];
        await Promise.all(codes.map(put));
        expect(codes).toContainEqual(await store.findOtp(userId, 'email'));
      });

      it('keeps the codes of each user and channel apart', async () => {
        const ada = `u-${randomUUID()}`;
        const bob = `u-${randomUUID()}`;
        const codes = [otp(ada, 'email'), otp(ada, 'sms'), otp(bob, 'email')];
        for (const o of codes) await put(o);
        expect(await Promise.all(codes.map((o) => store.findOtp(o.userId, o.channel)))).toEqual(codes);
        expect(await store.findOtp(bob, 'sms')).toBeNull();
      });

      it('deletes the code of one user and channel only; deleting a missing code is no error', async () => {
        const userId = `u-${randomUUID()}`;
        const sms = otp(userId, 'sms');
        await put(otp(userId, 'email'));
        await put(sms);
        await store.transaction(async (tx) => {
          await tx.otps.delete(userId, 'email');
          await tx.otps.delete(userId, 'email');
          await tx.otps.delete(`u-${randomUUID()}`, 'sms');
        });
        expect(await store.findOtp(userId, 'email')).toBeNull();
        expect(await store.findOtp(userId, 'sms')).toEqual(sms);
      });
    });

    describe('lockout (behaviour.md §4.4)', () => {
      // the OTP/TOTP attempts, claimed before the code is compared (issue 30 §1)
      runAttemptLogSuite('otp lockout', () => store.failures);

      it('counted separately for TOTP and for email/SMS OTP, and per user: a success resets one counter only', async () => {
        const user = `u-${randomUUID()}`;
        const keys = [`otp:${user}`, `totp:${user}`, `otp:u-${randomUUID()}`];
        for (const key of keys) await claimAttempt(store.failures, key, now, 'otp_lockout');
        await store.failures.clear(keys[0]!);
        expect(await store.failures.attemptsSince(keys[0]!, 0)).toEqual([]);
        expect(await store.failures.attemptsSince(keys[1]!, 0)).toEqual([now]);
        expect(await store.failures.attemptsSince(keys[2]!, 0)).toEqual([now]);
      });
    });

    // issue 16: the factors (behaviour.md §4.3-§4.5, §4.7)
    const totp = (userId: string, over: Partial<TotpRecord> = {}): TotpRecord => ({
      userId, slot: 'active', secretSealed: `v1.sealed-${randomUUID()}`, lastStep: null, expiresAt: null, createdAt: now, ...over,
    });
    const codes = (userId: string, slot: 'active' | 'pending', n = 3): RecoveryCodeRecord[] =>
      Array.from({ length: n }, () => ({ id: randomUUID(), userId, slot, codeHash: hashOf(randomUUID()), usedAt: null, createdAt: now }));

    describe('TOTP enrolments (behaviour.md §4.5)', () => {
      it('stores an active and a pending enrolment per user, each replaced by a new one in its slot', async () => {
        const u = `u-${randomUUID()}`;
        const a = totp(u);
        const p1 = totp(u, { slot: 'pending', expiresAt: Y2100 });
        const p2 = totp(u, { slot: 'pending', expiresAt: Y2100 });
        await store.transaction(async (tx) => { await tx.totp.put(a); await tx.totp.put(p1); await tx.totp.put(p2); });
        expect(await store.findTotp(u, 'active')).toEqual(a);
        expect(await store.findTotp(u, 'pending')).toEqual(p2);
        expect(await store.findTotp(`u-${randomUUID()}`, 'active')).toBeNull();
      });

      it('the replay guard: a step is accepted once, only after the last accepted one', async () => {
        const u = `u-${randomUUID()}`;
        await store.transaction((tx) => tx.totp.put(totp(u)));
        expect(await store.transaction((tx) => tx.totp.advanceStep(u, 'active', 60_000_001))).toBe(true);
        expect(await store.transaction((tx) => tx.totp.advanceStep(u, 'active', 60_000_001))).toBe(false);
        expect(await store.transaction((tx) => tx.totp.advanceStep(u, 'active', 60_000_000))).toBe(false);
        expect(await store.transaction((tx) => tx.totp.advanceStep(u, 'active', 60_000_002))).toBe(true);
        expect((await store.findTotp(u, 'active'))?.lastStep).toBe(60_000_002);
        expect(await store.transaction((tx) => tx.totp.advanceStep(u, 'pending', 1))).toBe(false);
      });

      it('of two racing requests with the same step, one is accepted', async () => {
        const u = `u-${randomUUID()}`;
        await store.transaction((tx) => tx.totp.put(totp(u)));
        const results = await Promise.all([1, 2].map(() => store.transaction((tx) => tx.totp.advanceStep(u, 'active', 70_000_000))));
        expect(results.filter(Boolean)).toHaveLength(1);
      });

      it('promotion: the pending enrolment and its recovery codes replace the active ones', async () => {
        const u = `u-${randomUUID()}`;
        const oldCodes = codes(u, 'active');
        const newCodes = codes(u, 'pending');
        const pending = totp(u, { slot: 'pending', expiresAt: Y2100 });
        await store.transaction(async (tx) => {
          await tx.totp.put(totp(u));
          await tx.totp.put(pending);
          await tx.recoveryCodes.replace(u, 'active', oldCodes);
          await tx.recoveryCodes.replace(u, 'pending', newCodes);
        });
        // pending codes do not count yet
        expect(await store.findRecoveryCode(u, newCodes[0]!.codeHash)).toBeNull();
        await store.transaction(async (tx) => { await tx.totp.promote(u, 80_000_000); await tx.recoveryCodes.promote(u); });
        expect(await store.findTotp(u, 'pending')).toBeNull();
        expect(await store.findTotp(u, 'active')).toEqual({ ...pending, slot: 'active', expiresAt: null, lastStep: 80_000_000 });
        expect(await store.findRecoveryCode(u, oldCodes[0]!.codeHash)).toBeNull();
        expect(await store.findRecoveryCode(u, newCodes[0]!.codeHash)).toEqual({ ...newCodes[0], slot: 'active' });
      });
    });

    describe('recovery codes (behaviour.md §4.5)', () => {
      it('each works once: the first use wins, a second is refused, also when racing', async () => {
        const u = `u-${randomUUID()}`;
        const set = codes(u, 'active', 10);
        await store.transaction((tx) => tx.recoveryCodes.replace(u, 'active', set));
        expect(await store.transaction((tx) => tx.recoveryCodes.use(set[0]!.id, now))).toBe(true);
        expect(await store.transaction((tx) => tx.recoveryCodes.use(set[0]!.id, now))).toBe(false);
        expect((await store.findRecoveryCode(u, set[0]!.codeHash))?.usedAt).toBe(now);
        const raced = await Promise.all([1, 2].map(() => store.transaction((tx) => tx.recoveryCodes.use(set[1]!.id, now))));
        expect(raced.filter(Boolean)).toHaveLength(1);
        expect((await store.findRecoveryCode(u, set[2]!.codeHash))?.usedAt).toBeNull();
      });

      it('are looked up by hash within the user only', async () => {
        const u = `u-${randomUUID()}`;
        const set = codes(u, 'active');
        await store.transaction((tx) => tx.recoveryCodes.replace(u, 'active', set));
        expect(await store.findRecoveryCode(`u-${randomUUID()}`, set[0]!.codeHash)).toBeNull();
      });
    });

    describe('OTP enrolments and stored factors (behaviour.md §4.1 "verified factor", §4.3)', () => {
      it('an enrolment is pending until verified once; the factors report verified enrolments, TOTP and passkeys', async () => {
        const u = `u-${randomUUID()}`;
        const other = `u-${randomUUID()}`;
        await store.transaction(async (tx) => {
          await tx.otpEnrolments.put({ userId: u, channel: 'email', verifiedAt: null, createdAt: now });
          await tx.otpEnrolments.put({ userId: u, channel: 'sms', verifiedAt: null, createdAt: now });
        });
        expect((await store.storedFactors([u])).get(u)).toEqual({ totp: false, emailOtp: false, smsOtp: false, passkeys: 0 });
        expect(await store.transaction((tx) => tx.otpEnrolments.verify(u, 'email', now))).toBe(true);
        expect(await store.transaction((tx) => tx.otpEnrolments.verify(u, 'email', now + 1))).toBe(false);
        expect(await store.findOtpEnrolment(u, 'email')).toEqual({ userId: u, channel: 'email', verifiedAt: now, createdAt: now });
        await store.transaction((tx) => tx.totp.put(totp(u)));
        await store.transaction((tx) => tx.totp.put(totp(other, { slot: 'pending', expiresAt: Y2100 })));
        const f = await store.storedFactors([u, other]);
        expect(f.get(u)).toEqual({ totp: true, emailOtp: true, smsOtp: false, passkeys: 0 });
        expect(f.get(other)).toEqual({ totp: false, emailOtp: false, smsOtp: false, passkeys: 0 });
        expect((await store.storedFactors([])).size).toBe(0);
      });

      it('a reset deletes every factor and MFA session of one user, and nothing of another', async () => {
        const u = `u-${randomUUID()}`;
        const keep = `u-${randomUUID()}`;
        for (const id of [u, keep]) {
          await store.transaction(async (tx) => {
            await tx.totp.put(totp(id));
            await tx.totp.put(totp(id, { slot: 'pending', expiresAt: Y2100 }));
            await tx.recoveryCodes.replace(id, 'active', codes(id, 'active'));
            await tx.otpEnrolments.put({ userId: id, channel: 'email', verifiedAt: now, createdAt: now });
            await tx.sessions.create(session({ userId: id }));
          });
        }
        const deleted = await store.transaction(async (tx) => {
          const n = (await tx.totp.delete(u, 'active')) + (await tx.totp.delete(u, 'pending')) +
            (await tx.recoveryCodes.deleteAllOfUser(u)) + (await tx.otpEnrolments.deleteAllOfUser(u)) + (await tx.passkeys.deleteAllOfUser(u));
          expect(await tx.sessions.deleteAllOfUser(u)).toBe(1);
          return n;
        });
        expect(deleted).toBe(2 + 3 + 1);
        expect((await store.storedFactors([u])).get(u)).toEqual({ totp: false, emailOtp: false, smsOtp: false, passkeys: 0 });
        expect((await store.storedFactors([keep])).get(keep)).toEqual({ totp: true, emailOtp: true, smsOtp: false, passkeys: 0 });
      });

      it('points a session at a channel and re-arms it', async () => {
        const s = session();
        await store.transaction((tx) => tx.sessions.create(s));
        await store.transaction((tx) => tx.sessions.setChannel(s.id, 'email', 'ada@example.com', Y2100));
        expect(await store.findSessionByHandleHash(s.handleHash)).toEqual({ ...s, channel: 'email', contact: 'ada@example.com', expiresAt: Y2100 });
      });
    });

    describe('transactions', () => {
      it('commits the writes of a transaction with its events, in emit order, stamped by the clock', async () => {
        const s = session();
        const code = otp(s.userId);
        const data = { event_name: 'verify_otp', to: 'ada@example.com', user: s.user, variables: { otp: 'ABC123' } };
        const events = await committedBy(() => store.transaction(async (tx) => {
          await tx.sessions.create(s);
          await tx.otps.put(code);
          tx.events.emit('email.send', data);
          tx.events.emit('mfa.session_opened', null);
        }));
        expect(events).toEqual([
          { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'email.send', source: 'mfa', occurredAt: now, data },
          { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'mfa.session_opened', source: 'mfa', occurredAt: now, data: null },
        ]);
        expect(events[0]!.id).not.toBe(events[1]!.id);
        expect(await store.findSessionByHandleHash(s.handleHash)).toEqual(s);
        expect(await store.findOtp(s.userId, 'email')).toEqual(code);
      });

      it('returns what the transaction returns', async () => {
        await expect(store.transaction(async () => ({ ok: 1 }))).resolves.toEqual({ ok: 1 });
      });

      it('rolls back every write and every event when the transaction throws, and rethrows the error', async () => {
        const kept = session();
        const doomed = session();
        const codeA = otp(kept.userId);
        const codeB = otp(doomed.userId, 'sms');
        await store.transaction(async (tx) => {
          await tx.sessions.create(kept);
          await tx.sessions.create(doomed);
          await tx.otps.put(codeA);
          await tx.otps.put(codeB);
        });
        const fresh = session();
        const boom = new Error('boom');
        const events = await committedBy(() => expect(store.transaction(async (tx) => {
          await tx.sessions.create(fresh);
          await tx.sessions.rearm(kept.id, Y2100);
          expect(await tx.sessions.delete(doomed.id)).toBe(true);
          await tx.otps.put(otp(kept.userId));
          await tx.otps.delete(doomed.userId, 'sms');
          await tx.otps.put(otp(fresh.userId));
          tx.events.emit('email.send', { to: 'ada@example.com' });
          throw boom;
        })).rejects.toBe(boom));
        expect(events).toEqual([]);
        expect(await store.findSessionByHandleHash(fresh.handleHash)).toBeNull();
        expect(await store.findSessionByHandleHash(kept.handleHash)).toEqual(kept);
        expect(await store.findSessionByHandleHash(doomed.handleHash)).toEqual(doomed);
        expect(await store.findOtp(kept.userId, 'email')).toEqual(codeA);
        expect(await store.findOtp(doomed.userId, 'sms')).toEqual(codeB);
        expect(await store.findOtp(fresh.userId, 'email')).toBeNull();
      });

      it('readers never see the writes of a transaction that does not commit', async () => {
        const s = session();
        let read: Promise<MfaSessionRecord | null> | undefined;
        await expect(store.transaction(async (tx) => {
          await tx.sessions.create(s);
          // asked while the transaction is open; a store may answer now or after it ends
          read = store.findSessionByHandleHash(s.handleHash);
          await new Promise((r) => setTimeout(r, 20));
          throw new Error('abandoned');
        })).rejects.toThrow('abandoned');
        expect(await read).toBeNull();
      });
    });
  });
}
