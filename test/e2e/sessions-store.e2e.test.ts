/**
 * @module test/e2e/sessions-store
 * Browser sessions kept in Redis (`--redis-url`) and in the main database (default), all-in-one:
 * login, profile by cookie, logout refuses the old cookie, and a session outlives a process restart
 * (behaviour.md §1.3 `--redis-url`, §2.1 browser session, §2.2 logout).
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { MACHINE, spawnGatehouse, startDeployment, waitForHttp, type Deployment, type GatehouseProcess } from '@gatehouse/testing';
import { rest } from '../support/surfaces.ts';
import { PASSWORD, expectError, expectOk, freshEmail, sessionCookie } from '../support/scenario.ts';

jest.setTimeout(60_000);

/** The session id of an access token: its `nonce` claim (behaviour.md §2.1). */
function sessionIdOf(accessToken: string): string {
  return (JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { nonce: string }).nonce;
}

describe.each([
  { store: 'redis', redis: true },
  { store: 'database', redis: false },
])('sessions in the $store', ({ redis: useRedis }) => {
  let d: Deployment;
  let restarted: GatehouseProcess | undefined;
  let redis: Redis;
  beforeAll(async () => {
    d = await startDeployment('all', { redis: useRedis, readyTimeoutMs: 60_000 });
    redis = new Redis(MACHINE.redisUrl);
  }, 120_000);
  afterAll(async () => {
    redis?.disconnect();
    await restarted?.stop();
    await d?.stop();
  });

  const email = freshEmail('store');
  const sessionKey = (id: string): string => `gatehouse:session:${id}`;

  it('login, profile by cookie, logout refuses the old cookie', async () => {
    expectOk(await rest(d, { op: 'signup', args: { email, password: PASSWORD, confirm_password: PASSWORD } }));
    const login = await rest(d, { op: 'login', args: { email, password: PASSWORD } });
    const cookie = sessionCookie(login);
    const sid = sessionIdOf(expectOk(login).access_token);
    // the session record lives where the flag says: in Redis only with --redis-url
    expect(await redis.exists(sessionKey(sid))).toBe(useRedis ? 1 : 0);
    expect(expectOk(await rest(d, { op: 'profile', creds: { cookie } })).email).toBe(email);
    expect(expectOk(await rest(d, { op: 'logout', creds: { cookie } })).message).toBe('Logged out successfully');
    expectError(await rest(d, { op: 'profile', creds: { cookie } }), 'unauthenticated', 'unauthorized');
    expect(await redis.exists(sessionKey(sid))).toBe(0);
  });

  it('a session survives a restart of the all-in-one process', async () => {
    const login = await rest(d, { op: 'login', args: { email, password: PASSWORD } });
    const cookie = sessionCookie(login);
    const old = d.processes[0]!;
    const flags = old.child.spawnargs.slice(3); // [node, bin, 'all', ...flags]
    await old.stop();
    restarted = spawnGatehouse('all', flags);
    await waitForHttp(`${d.url}/healthz`, 45_000, restarted.alive);
    expect(expectOk(await rest(d, { op: 'profile', creds: { cookie } })).email).toBe(email);
    expect(expectOk(await rest(d, { op: 'profile', creds: { bearer: expectOk(login).access_token } })).email).toBe(email);
    expect(expectOk(await rest(d, { op: 'logout', creds: { cookie } })).message).toBe('Logged out successfully');
    expectError(await rest(d, { op: 'profile', creds: { cookie } }), 'unauthenticated', 'unauthorized');
  });
});
