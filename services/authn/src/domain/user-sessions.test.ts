/**
 * @module @gatehouse/authn/domain/user-sessions.test
 * The caller's own sessions (issue 33) through authn's RPCs, on memory storage, on SQLite and
 * PostgreSQL (authn's database session store), and with sessions in Redis: each session is listed with
 * the device that opened it (User-Agent, client IP), its creation and its last use, the caller's own
 * marked and first; the last use is written at most once a minute however many requests come; one
 * session or all the others are ended and their tokens and cookies fail on the next request (behaviour
 * §2.1: a token is valid only while its session exists); bad ids answer 400/404, never 500.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createMemorySessionStore, createRedisSessionStore, type SessionStore } from '@gatehouse/auth';
import { createScratchDatabase, openDatabase, type Database, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { cookieHeader, makeAuthn, PASSWORD, T0, type FixtureStorage } from '../fixture.ts';
import { createMemoryAuthnStorage } from '../storage/memory.ts';
import { authnSchema, createMikroAuthnStorage } from '../storage/mikro/index.ts';

const LAPTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148';

type Variant = 'memory' | 'sqlite' | 'postgres' | 'redis';

describe.each(['memory', 'sqlite', 'postgres', 'redis'] as Variant[])("the caller's sessions (issue 33) on %s", (variant) => {
  let scratch: ScratchDatabase | undefined;
  let db: Database | undefined;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    if (variant === 'sqlite' || variant === 'postgres') {
      scratch = await createScratchDatabase(variant);
      db = await openDatabase(scratch.options, authnSchema, { logger: createLogger('silent') });
    }
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await db?.close();
    await scratch?.drop();
  });

  /** authn on the variant's storage, its session store counting the last-use writes */
  function setup() {
    const touches: string[] = [];
    const counting = (s: SessionStore): SessionStore => ({
      ...s,
      create: (r) => s.create(r), get: (id) => s.get(id), findByHandleHash: (h) => s.findByHandleHash(h), delete: (id) => s.delete(id),
      deleteAllForUser: (u, e) => s.deleteAllForUser(u, e), deleteAllForClient: (c, u) => s.deleteAllForClient(c, u), update: (r) => s.update(r),
      listForUser: (u) => s.listForUser(u),
      touch: async (r, at) => { touches.push(r.id); await s.touch(r, at); },
    });
    const storage = (clock: () => number): FixtureStorage => {
      if (db) {
        const m = createMikroAuthnStorage(db, { clock });
        return { ...m, sessions: counting(m.sessions) };
      }
      const memory = createMemoryAuthnStorage();
      if (variant === 'redis') {
        const redis = createRedisSessionStore({ url: 'redis://127.0.0.1:6379', keyPrefix: `gh-test-${randomUUID()}:`, clock });
        closers.push(() => redis.close());
        return { users: memory.users, lockout: memory.lockout, sessions: counting(redis) };
      }
      return { users: memory.users, lockout: memory.lockout, sessions: counting(createMemorySessionStore({ clock })) };
    };
    return { a: makeAuthn({}, { storage }), touches };
  }

  /** the fire-and-forget last-use write of the request just answered, settled */
  const settle = () => new Promise((r) => setTimeout(r, 50));

  async function threeSessions() {
    const { a, touches } = setup();
    const email = `${randomUUID()}@example.com`;
    const signedUp = await a.signup(email);
    const login = async (ua: string) => {
      const r = await a.call('Login', { email, password: PASSWORD }, { 'user-agent': ua });
      return { id: r.res.user.id as string, bearer: { authorization: `Bearer ${r.res.access_token}` }, cookie: cookieHeader(r.cookies) };
    };
    a.advance(10);
    const laptop = await login(LAPTOP);
    a.advance(10);
    const phone = await login(PHONE);
    return { a, touches, signedUp, laptop, phone, userId: laptop.id };
  }

  it('lists every live session with its device, the current one first and marked', async () => {
    const { a, signedUp, laptop } = await threeSessions();
    const other = await a.signup(`${randomUUID()}@example.com`);
    const { res } = await a.call('Sessions', {}, laptop.bearer);
    expect(res.sessions).toHaveLength(3);
    expect(res.sessions[0]).toMatchObject({
      is_current: true, user_agent: LAPTOP, ip_address: '127.0.0.1', login_method: 'basic_auth', created_at: T0 + 10, last_used_at: T0 + 10, client_id: '',
    });
    expect(res.sessions[0].expires_at).toBe(T0 + 10 + a.options.sessionExpiresIn);
    // then by last use: the phone (opened later), then the signup's session (no User-Agent sent)
    expect(res.sessions.slice(1).map((s: { user_agent: string; is_current: boolean }) => [s.user_agent, s.is_current])).toEqual([[PHONE, false], ['', false]]);
    // the same list through the cookie, the current one being the cookie's
    const viaCookie = (await a.call('Sessions', {}, signedUp.cookie)).res.sessions;
    expect(viaCookie[0]).toMatchObject({ is_current: true, user_agent: '' });
    expect((await a.call('Sessions', {}, other.bearer)).res.sessions).toHaveLength(1);
    await expect(a.call('Sessions', {}, {})).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('records the last use at most once a minute per session, not once per request', async () => {
    const { a, touches, laptop, phone } = await threeSessions();
    const phoneId = (await a.call('Sessions', {}, phone.bearer)).res.sessions[0].id as string;
    touches.length = 0;
    for (let i = 0; i < 5; i++) await a.call('Profile', {}, phone.bearer);
    await settle();
    expect(touches).toEqual([]);
    a.advance(61);
    for (let i = 0; i < 5; i++) await a.call('Profile', {}, phone.bearer);
    await settle();
    expect(touches).toEqual([phoneId]);
    a.advance(30);
    await a.call('Profile', {}, phone.cookie);
    await settle();
    expect(touches).toEqual([phoneId]);
    const listed = (await a.call('Sessions', {}, laptop.bearer)).res.sessions;
    expect(listed.find((s: { id: string }) => s.id === phoneId)).toMatchObject({ last_used_at: T0 + 20 + 61, created_at: T0 + 20 });
    // most recently used first after the current one
    expect(listed[1].id).toBe(phoneId);
  });

  it("revoke_session ends one session: its bearer token and cookie fail at once; others' ids are not found", async () => {
    const { a, laptop, phone } = await threeSessions();
    const phoneId = (await a.call('Sessions', {}, phone.bearer)).res.sessions[0].id as string;
    const stranger = await a.signup(`${randomUUID()}@example.com`);
    // another user's session, an unknown, malformed or empty id
    await expect(a.call('RevokeSession', { id: phoneId }, stranger.bearer)).rejects.toMatchObject({ code: 'not_found', message: 'session not found' });
    await expect(a.call('RevokeSession', { id: randomUUID() }, laptop.bearer)).rejects.toMatchObject({ code: 'not_found', message: 'session not found' });
    await expect(a.call('RevokeSession', { id: "x'or'1'='1" }, laptop.bearer)).rejects.toMatchObject({ code: 'not_found', message: 'session not found' });
    await expect(a.call('RevokeSession', { id: "x' or 1=1 --" }, laptop.bearer)).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(a.call('RevokeSession', { id: '' }, laptop.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'session id is required' });
    await expect(a.call('RevokeSession', {}, laptop.bearer)).rejects.toMatchObject({ code: 'invalid_argument', message: 'session id is required' });
    expect((await a.call('Profile', {}, phone.bearer)).res.id).toBe(laptop.id);

    const out = await a.call('RevokeSession', { id: phoneId.toUpperCase() }, laptop.bearer);
    expect(out.res.message).toBe('Session revoked');
    expect(out.cookies).toEqual([]);
    await expect(a.call('Profile', {}, phone.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Profile', {}, phone.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await a.call('Sessions', {}, laptop.bearer)).res.sessions.map((s: { id: string }) => s.id)).not.toContain(phoneId);
    await expect(a.call('RevokeSession', { id: phoneId }, laptop.bearer)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('revoke_session of the caller\'s own session signs it out and clears its cookies', async () => {
    const { a, laptop } = await threeSessions();
    const own = (await a.call('Sessions', {}, laptop.cookie)).res.sessions[0].id as string;
    const out = await a.call('RevokeSession', { id: own }, laptop.cookie);
    expect(out.cookies.filter((c) => /^cookie_session(_domain)?=;/.test(c) && /Max-Age=0/.test(c))).toHaveLength(2);
    await expect(a.call('Profile', {}, laptop.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('revoke_other_sessions ends every session but the caller\'s', async () => {
    const { a, signedUp, laptop, phone } = await threeSessions();
    const out = await a.call('RevokeOtherSessions', {}, laptop.bearer);
    expect(out.res).toEqual({ message: 'Other sessions revoked', count: 2 });
    await expect(a.call('Profile', {}, phone.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Profile', {}, signedUp.cookie)).rejects.toMatchObject({ code: 'unauthenticated' });
    expect((await a.call('Profile', {}, laptop.bearer)).res.id).toBe(laptop.id);
    const left = (await a.call('Sessions', {}, laptop.cookie)).res.sessions;
    expect(left).toEqual([expect.objectContaining({ is_current: true, user_agent: LAPTOP })]);
    expect((await a.call('RevokeOtherSessions', {}, laptop.bearer)).res.count).toBe(0);
  });
});
