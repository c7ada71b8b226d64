/** The one check of who may call (issue 14 §2): each auth class against each kind of caller (behaviour.md §2.3, §5.1). */
import { describe, expect, it } from '@jest/globals';
import { createJwtSigner, sha256Hex } from '@gatehouse/crypto';
import { createCallContext, type AuthClass } from '@gatehouse/rpc';
import { createAuthenticator, type Authenticator } from './authenticator.ts';
import { createAuthGuard } from './guard.ts';
import { createMemorySessionStore } from './session-store.ts';

const ISS = 'https://auth.example.com';
const now = 2_000_000;
const clock = (): number => now;
const jwt = createJwtSigner({ type: 'HS256', secret: 'test-secret-test-secret-test-secret' });

async function setup() {
  const sessions = createMemorySessionStore({ clock });
  await sessions.create({ id: 's1', userId: 'u1', handleHash: sha256Hex('handle-1'), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], authTime: now, expiresAt: now + 3600, createdAt: now });
  const token = await jwt.sign({ iss: ISS, sub: 'u1', nonce: 's1', token_type: 'access_token', roles: ['user'], scope: ['openid'] }, { expiresInSeconds: 600, nowSeconds: now });
  const authenticator = createAuthenticator({ jwt, sessions, issuer: ISS, adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock });
  const callers: Record<string, Record<string, string>> = {
    anonymous: {},
    'a forged bearer': { authorization: 'Bearer not-a-token' },
    user: { authorization: `Bearer ${token}` },
    'user by cookie': { cookie: 'cookie_session=handle-1' },
    'mfa cookie': { cookie: 'mfa=some-handle' },
    admin: { 'x-service-admin-secret': 'the-admin-secret' },
    'a wrong admin secret': { 'x-service-admin-secret': 'guess' },
  };
  return { authenticator, callers };
}

// who passes each class; everyone else is refused with 401
const PASSES: Record<Exclude<AuthClass, 'public' | 'internal'>, string[]> = {
  user: ['user', 'user by cookie'],
  mfa: ['mfa cookie'],
  user_or_mfa: ['user', 'user by cookie', 'mfa cookie'],
  admin: ['admin'],
  // without an org-admin directory (below: with one)
  org_admin: ['admin'],
  permissions: ['user', 'user by cookie', 'admin'],
};

describe('createAuthGuard', () => {
  for (const [auth, passing] of Object.entries(PASSES) as Array<[AuthClass, string[]]>) {
    it(`lets only ${passing.join(', ')} call a ${auth} RPC; everyone else is 401 unauthenticated`, async () => {
      const { authenticator, callers } = await setup();
      const guard = createAuthGuard(authenticator);
      for (const [who, headers] of Object.entries(callers)) {
        const outcome = await guard(auth, createCallContext({ headers })).then(() => 'passes', (e: unknown) => e);
        if (passing.includes(who)) expect({ who, outcome }).toEqual({ who, outcome: 'passes' });
        else expect({ who, outcome }).toEqual({ who, outcome: expect.objectContaining({ code: 'unauthenticated', message: auth === 'mfa' ? 'invalid session' : 'unauthorized' }) });
      }
    });
  }

  it('without a session store refuses every class but the MFA cookie', async () => {
    const { callers } = await setup();
    const guard = createAuthGuard(null);
    await expect(guard('user', createCallContext({ headers: callers.user! }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(guard('admin', createCallContext({ headers: callers.admin! }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(guard('mfa', createCallContext({ headers: callers['mfa cookie']! }))).resolves.toBeNull();
    await expect(guard('user_or_mfa', createCallContext({ headers: callers['mfa cookie']! }))).resolves.toBeNull();
  });

  it('org_admin with a directory: the org admin of the addressed org passes; of another org, of a missing org, or a plain member is 401', async () => {
    const { authenticator, callers } = await setup();
    const admins = new Set(['u1 org-x']);
    const guard = createAuthGuard(authenticator, {
      orgAdmins: {
        orgOf: async (call) => (typeof call.request['org_id'] === 'string' && call.request['org_id'] !== 'missing' ? call.request['org_id'] : null),
        isOrgAdmin: async (userId, orgId) => admins.has(`${userId} ${orgId}`),
      },
    });
    const call = (orgId: string) => ({ rpc: 'OrgMembers', request: { org_id: orgId } });
    await expect(guard('org_admin', createCallContext({ headers: callers.user! }), call('org-x'))).resolves.toMatchObject({ kind: 'user', userId: 'u1' });
    await expect(guard('org_admin', createCallContext({ headers: callers['user by cookie']! }), call('org-x'))).resolves.toMatchObject({ kind: 'user' });
    for (const orgId of ['org-y', 'missing']) {
      await expect(guard('org_admin', createCallContext({ headers: callers.user! }), call(orgId))).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    }
    await expect(guard('org_admin', createCallContext({ headers: callers.user! }))).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(guard('org_admin', createCallContext({ headers: callers.admin! }), call('missing'))).resolves.toMatchObject({ kind: 'admin' });
    await expect(guard('org_admin', createCallContext({ headers: callers.anonymous! }), call('org-x'))).rejects.toMatchObject({ code: 'unauthenticated' });
    // the plain `admin` class never accepts an org admin
    await expect(guard('admin', createCallContext({ headers: callers.user! }), call('org-x'))).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('org_admin refuses a service-account (client_credentials) token even where its subject is an org admin (behaviour.md §2.3)', async () => {
    const serviceAccount = { kind: 'service_account', clientId: 'c1', subject: 'service_account:c1', scope: [], session: {} };
    const authenticator = { resolveCaller: async () => serviceAccount } as unknown as Authenticator;
    const guard = createAuthGuard(authenticator, { orgAdmins: { orgOf: async () => 'org-x', isOrgAdmin: async () => true } });
    await expect(guard('org_admin', createCallContext({ headers: {} }), { rpc: 'OrgMembers', request: { org_id: 'org-x' } }))
      .rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
  });
});
