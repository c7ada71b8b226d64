/**
 * @module service.test: who may call each mfa RPC (issue 14 §2; behaviour.md §2.3 credential
 * resolution), through the in-process client of createMfaService.
 */
import { describe, expect, it } from '@jest/globals';
import { createAuthenticator, createMemorySessionStore, type Authenticator } from '@gatehouse/auth';
import { createJwtSigner, sha256Hex } from '@gatehouse/crypto';
import { createCallContext, createInProcessClient, type AuthClass, type CallContext } from '@gatehouse/rpc';
import { makeMfa, openRequest, T0, user, withCookie, type MfaFixture } from './fixture.ts';

const INVALID_SESSION = { code: 'unauthenticated', message: 'invalid session' };
const UNAUTHORIZED = { code: 'unauthenticated', message: 'unauthorized' };

/** The auth class each public RPC declares in mfa.proto. */
const PUBLIC_RPCS: Record<string, { auth: AuthClass }> = {
  ResendOtp: { auth: 'mfa' },
  WebauthnRegistrationOptions: { auth: 'user_or_mfa' },
  WebauthnLoginOptions: { auth: 'public' },
  WebauthnCredentials: { auth: 'user' },
  WebauthnDeleteCredential: { auth: 'user' },
};

/** The public RPCs whose auth class is one of `classes`. */
const withAuth = (...classes: AuthClass[]): string[] => Object.keys(PUBLIC_RPCS).filter((rpc) => classes.includes(PUBLIC_RPCS[rpc]!.auth));

/** An authenticator over a memory session store holding one session of u-ada, behind `cookie_session=handle-1`. */
async function sessionStoreWithAda(): Promise<Authenticator> {
  const clock = () => T0;
  const sessions = createMemorySessionStore({ clock });
  await sessions.create({ id: 's1', userId: 'u-ada', handleHash: sha256Hex('handle-1'), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], authTime: T0, expiresAt: T0 + 3600, createdAt: T0 });
  const jwt = createJwtSigner({ type: 'HS256', secret: 'test-secret-test-secret-test-secret' });
  return createAuthenticator({ jwt, sessions, issuer: 'https://auth.example.com', adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock });
}

/** The untyped in-process transport of the public service, to call RPCs by name with any request. */
const publicTransport = (m: MfaFixture) => createInProcessClient(m.service.public.desc, m.service.public.handlers);
const call = (m: MfaFixture, rpc: string, ctx: CallContext) => publicTransport(m).call(rpc, {}, ctx);

describe('who may call (issue 14 §2: each RPC\'s auth class, declared once in the proto)', () => {
  it('the descriptor carries the auth class of every public RPC, and the internal RPCs are internal', () => {
    const m = makeMfa();
    expect(Object.fromEntries([...m.service.public.desc.methods].map(([rpc, codec]) => [rpc, codec.auth])))
      .toEqual(Object.fromEntries(Object.entries(PUBLIC_RPCS).map(([rpc, { auth }]) => [rpc, auth])));
    expect(new Set([...m.service.internal.desc.methods.values()].map((codec) => codec.auth))).toEqual(new Set(['internal']));
    expect([...m.service.internal.desc.methods.keys()]).toEqual([
      'OpenOtpChallenge', 'VerifyOtpChallenge', 'EvaluateGate', 'SkipMfaSetup', 'LockMfa', 'BeginOtpEnrolment', 'BeginTotpEnrolment',
      'ResetUserMfa', 'EnrolledMfaMethods', 'VerifyWebauthnRegistration', 'VerifyWebauthnLogin',
    ]);
  });

  it('an mfa-class RPC without the mfa cookie is 401 invalid session before anything runs', async () => {
    const m = makeMfa();
    await m.openOverWire();
    for (const headers of [{}, { cookie: 'cookie_session=handle-1' }, { cookie: 'mfa=' }]) {
      const ctx = createCallContext({ headers });
      await expect(m.public.ResendOtp({}, ctx)).rejects.toMatchObject(INVALID_SESSION);
      expect(ctx.setCookies).toEqual([]);
    }
    expect(m.mails()).toHaveLength(1);
  });

  it('a signed-in user\'s RPC is 401 unauthorized without a session store (split mode without --redis-url), even with an mfa cookie', async () => {
    const m = makeMfa();
    const { cookie } = await m.openOverWire();
    for (const rpc of withAuth('user')) {
      await expect(call(m, rpc, withCookie(`cookie_session=handle-1; ${cookie}`))).rejects.toMatchObject(UNAUTHORIZED);
    }
    for (const rpc of withAuth('user_or_mfa')) await expect(call(m, rpc, withCookie('cookie_session=handle-1'))).rejects.toMatchObject(UNAUTHORIZED);
  });

  it('with a session store, a user RPC refuses a caller without a session with 401 unauthorized', async () => {
    const m = makeMfa({}, { authenticator: await sessionStoreWithAda() });
    for (const rpc of withAuth('user', 'user_or_mfa')) {
      await expect(call(m, rpc, withCookie('cookie_session=unknown'))).rejects.toMatchObject(UNAUTHORIZED);
    }
  });

  it('the internal RPCs take no caller credential: the internal token is the transport\'s check', async () => {
    const m = makeMfa();
    await expect(m.internal.OpenOtpChallenge(openRequest(user()), createCallContext())).resolves.toMatchObject({ code_sent: true });
  });
});
