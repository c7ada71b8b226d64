import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { createScratchDatabase, openDatabase, sqliteDataVersion, type Database, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { createAuthenticator } from '@gatehouse/auth';
import { createCallContext } from '@gatehouse/rpc';
import { PASSWORD, URL_, cookieHeader, makeAuthn } from '../fixture.ts';
import { authnSchema, createMikroAuthnStorage } from './mikro/index.ts';
import { createCachedAuthnStorage, type CachedAuthnStorage } from './cached.ts';

/**
 * The credential caches on the real MikroORM SQLite storage, through the service: every way a
 * session or user stops being valid must refuse the very next request (behaviour.md §2.1, §2.2),
 * with the cache warm for that credential beforehand (else the test would prove nothing).
 */
describe('authn with credential caches on SQLite', () => {
  let scratch: ScratchDatabase;
  let db: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase('sqlite');
    db = await openDatabase(scratch.options, authnSchema, { logger: createLogger('silent') });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  let cached: CachedAuthnStorage;
  const make = () => makeAuthn({}, {
    storage: (clock) => {
      const mikro = createMikroAuthnStorage(db, { clock });
      cached = createCachedAuthnStorage(mikro, { clock, externalVersion: sqliteDataVersion(scratch.options.url!)! });
      return { ...mikro, users: cached.users, sessions: cached.sessions, activity: cached.activity };
    },
  });
  const refused = { code: 'unauthenticated' };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  /**
   * The caller as another service sees it (all-in-one: authz shares this authenticator), i.e.
   * only the cached session and activity reads, without authn's own handler checks.
   */
  const caller = (a: ReturnType<typeof make>, headers: Record<string, string>) => createAuthenticator({
    jwt: a.jwt, sessions: cached.sessions, users: cached.activity, issuer: URL_, adminSecret: 'admin-secret',
    disableAdminHeaderAuth: false, clientId: a.options.clientId, clock: a.now,
  }).requireUser(createCallContext({ headers, protocol: 'rest' }));

  /** Two authenticated reads per credential so that both caches hold it. */
  async function warm(a: ReturnType<typeof make>, ...headers: Record<string, string>[]) {
    for (const h of headers) for (let i = 0; i < 2; i++) await a.call('Profile', {}, h);
    expect(cached.sessions.size()).toBeGreaterThan(0);
  }

  /** Both the service and the shared authenticator refuse `headers`. */
  async function expectRefused(a: ReturnType<typeof make>, headers: Record<string, string>) {
    await expect(a.call('Profile', {}, headers)).rejects.toMatchObject(refused);
    await expect(caller(a, headers)).rejects.toMatchObject(refused);
  }

  it('refuses the old bearer and cookie right after logout', async () => {
    const a = make();
    const s = await a.signup('logout@example.com');
    await warm(a, s.bearer, s.cookie);
    await expect(caller(a, s.bearer)).resolves.toBeDefined();
    await a.call('Logout', {}, s.cookie);
    await expectRefused(a, s.bearer);
    await expectRefused(a, s.cookie);
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: s.res.access_token })).rejects.toMatchObject({ message: 'invalid token' });
  });

  it('refuses every credential of the user right after deactivate_account', async () => {
    const a = make();
    const s = await a.signup('deactivate@example.com');
    const other = await a.call('Login', { email: 'deactivate@example.com', password: PASSWORD });
    await warm(a, s.bearer, s.cookie, bearer(other.res.access_token), cookieHeader(other.cookies));
    await a.call('DeactivateAccount', {}, s.bearer);
    for (const h of [s.bearer, s.cookie, bearer(other.res.access_token), cookieHeader(other.cookies)]) await expectRefused(a, h);
  });

  it('refuses the old cookie and bearer after session rotation, and accepts the new ones', async () => {
    const a = make();
    const s = await a.signup('rotate@example.com');
    await warm(a, s.bearer, s.cookie);
    const rotated = await a.call('Session', {}, s.cookie);
    await expectRefused(a, s.cookie);
    await expectRefused(a, s.bearer);
    await expect(a.call('Profile', {}, cookieHeader(rotated.cookies))).resolves.toBeDefined();
    await expect(a.call('Profile', {}, bearer(rotated.res.access_token))).resolves.toBeDefined();
  });

  it('refuses the other sessions after a password change through update_profile, keeping the caller\'s', async () => {
    const a = make();
    const s = await a.signup('password@example.com');
    const other = await a.call('Login', { email: 'password@example.com', password: PASSWORD });
    await warm(a, s.bearer, bearer(other.res.access_token), cookieHeader(other.cookies));
    const NEW = 'N3w!password';
    await a.call('UpdateProfile', { old_password: PASSWORD, new_password: NEW, confirm_new_password: NEW }, s.bearer);
    await expectRefused(a, bearer(other.res.access_token));
    await expectRefused(a, cookieHeader(other.cookies));
    await expect(a.call('Profile', {}, s.bearer)).resolves.toBeDefined();
  });

  it('refuses a live session of a user revoked through the repository (admin revoke path)', async () => {
    const a = make();
    const s = await a.signup('revoke@example.com');
    await warm(a, s.bearer, s.cookie);
    const user = (await cached.users.findByEmail('revoke@example.com'))!;
    await expect(caller(a, s.bearer)).resolves.toMatchObject({ userId: user.id });
    for (let i = 0; i < 2; i++) await a.call('ValidateJwtToken', { token_type: 'access_token', token: s.res.access_token });
    await cached.users.transaction(async (tx) => tx.users.update({ ...user, revokedTimestamp: a.now() }));
    await expectRefused(a, s.bearer);
    await expectRefused(a, s.cookie);
    await expect(a.call('ValidateJwtToken', { token_type: 'access_token', token: s.res.access_token })).rejects.toMatchObject({ message: 'invalid token' });
    await cached.users.transaction(async (tx) => tx.users.update({ ...user, revokedTimestamp: null }));
    await expect(a.call('Profile', {}, s.bearer)).resolves.toBeDefined();
    await expect(caller(a, s.cookie)).resolves.toMatchObject({ userId: user.id });
  });

  it('drops the caches when another process writes the SQLite file (PRAGMA data_version)', async () => {
    const a = make();
    const s = await a.signup('other-process@example.com');
    const other = await a.call('Login', { email: 'other-process@example.com', password: PASSWORD });
    await warm(a, s.bearer, s.cookie, bearer(other.res.access_token));
    const outside = new BetterSqlite3(scratch.options.url!);
    try {
      // another process ends every session of the user (this process's caches never saw it)
      const gone = outside.prepare('delete from authn_sessions where user_id = (select id from authn_users where email = ?)').run('other-process@example.com');
      expect(gone.changes).toBe(2);
    } finally {
      outside.close();
    }
    await new Promise((r) => setImmediate(r)); // the next request, in a later event-loop turn
    for (const h of [s.bearer, s.cookie, bearer(other.res.access_token)]) await expectRefused(a, h);
  });
});
