/**
 * @module @gatehouse/authn/fixture
 * Test fixture: the authn service on memory storage with a fake clock (used by *.test.ts only).
 */
import { generateKeyPairSync } from 'node:crypto';
import { createAuthenticator, createMemorySessionStore, parseCookies, type SessionStore } from '@gatehouse/auth';
import { createJwtSigner } from '@gatehouse/crypto';
import { createLogger } from '@gatehouse/observability';
import { createCallContext, createInProcessClient, serviceDescriptor, type CallContext } from '@gatehouse/rpc';
import { createAuthnService } from './service.ts';
import type { AuthnOptions } from './domain/options.ts';
import type { PermissionChecker } from './domain/deps.ts';
import type { MfaInternalClient } from './rpc/deps.ts';
import { createUserActivityCheck } from './domain/user.ts';
import { createMemoryAuthnStorage } from './storage/memory.ts';
import { createMemoryOAuthStore } from './storage/memory-oauth.ts';
import type { LoginLockout, UserRepository } from './storage/ports.ts';

export const URL_ = 'https://auth.example.com';
export const T0 = 1_800_000_000;
export const PASSWORD = 'Str0ng!pass';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
export const EC_KEYS = {
  privateKeyPem: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  publicKeyPem: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
};

export function testOptions(over: Partial<AuthnOptions> = {}): AuthnOptions {
  return {
    url: URL_, clientId: 'client-123', jwtRoleClaim: 'role',
    roles: ['user', 'editor', 'admin'], defaultRoles: ['user'], protectedRoles: ['admin'],
    enableStrongPassword: true, enableBasicAuthentication: true, enableMobileBasicAuthentication: true,
    enableSignup: true, enableEmailVerification: false, enablePhoneVerification: false, enableMagicLinkLogin: false,
    enableOrgDiscovery: false, enableDynamicClientRegistration: true, dynamicClientRegistrationMaxClients: 1000, accessTokenExpiresIn: 1800, refreshTokenExpiresIn: 2592000, sessionExpiresIn: 86400,
    appCookieSecure: true, appCookieSameSite: 'none', organizationName: 'Gatehouse', version: '2.3.0',
    redirectUris: [], allowedOrigins: ['*'], clientSecret: 'client-secret', defaultAuthorizeResponseType: 'code', defaultAuthorizeResponseMode: 'query',
    disableMfa: false, disableTotpLogin: false, disableEmailOtp: false, disableSmsOtp: false, disableWebauthnMfa: false, enforceMfa: false,
    ...over,
  };
}

export interface Reply<T = any> {
  res: T;
  cookies: string[];
}

export interface FixtureStorage {
  users: UserRepository;
  lockout: LoginLockout;
  sessions: SessionStore;
  /** the authenticator's user-activity hook (default: `createUserActivityCheck(users)`) */
  activity?: { isActive(userId: string): Promise<boolean> };
}

export function makeAuthn(
  over: Partial<AuthnOptions> = {},
  extra: {
    permissions?: PermissionChecker; mfa?: MfaInternalClient; storage?: (clock: () => number) => FixtureStorage;
    /** runs the work a flow does after its answer (default: at once, awaited; issue 30 §6) */
    afterAnswer?: (work: () => Promise<void>) => Promise<void>;
  } = {},
) {
  let now = T0;
  const clock = () => now;
  const options = testOptions(over);
  const memory = createMemoryAuthnStorage();
  const chosen = extra.storage?.(clock);
  const storage = { ...memory, ...(chosen ? { users: chosen.users, lockout: chosen.lockout } : {}) };
  const sessions: SessionStore = chosen?.sessions ?? createMemorySessionStore({ clock });
  const jwt = createJwtSigner({ type: 'ES256', ...EC_KEYS });
  const activity = chosen?.activity ?? createUserActivityCheck(storage.users);
  const authenticator = createAuthenticator({
    jwt, sessions, issuer: options.url, adminSecret: 'admin-secret', disableAdminHeaderAuth: false, clientId: options.clientId, clock,
    users: activity,
  });
  const oauth = createMemoryOAuthStore();
  const service = createAuthnService({
    options, activity, users: storage.users, sessions, lockout: storage.lockout, oauth, jwt, authenticator, clock,
    logger: createLogger('silent'), afterAnswer: extra.afterAnswer ?? ((work) => work()), ...(extra.permissions ? { permissions: extra.permissions } : {}), ...(extra.mfa ? { mfa: extra.mfa } : {}),
  });

  const publicClient = createInProcessClient(serviceDescriptor('authn'), service.handlers);
  const internalClient = createInProcessClient(serviceDescriptor('authn.internal'), service.internalHandlers);

  async function call<T = any>(rpc: string, req: unknown = {}, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const ctx: CallContext = createCallContext({ headers, protocol: 'rest' });
    // through the codec, as every transport calls a handler (the request normalised against the proto)
    const handler = service.handlers[rpc] ? publicClient : service.internalHandlers[rpc] ? internalClient : null;
    if (!handler) throw new Error(`no handler ${rpc}`);
    const res = (await handler.call(rpc, req, ctx)) as T;
    return { res, cookies: [...ctx.setCookies] };
  }

  /** Signs up `email` with the test password and returns the reply plus a Cookie header for its session. */
  async function signup(email = 'ada@example.com', more: Record<string, unknown> = {}) {
    const r = await call('Signup', { email, password: PASSWORD, confirm_password: PASSWORD, ...more });
    return { ...r, cookie: cookieHeader(r.cookies), bearer: { authorization: `Bearer ${r.res.access_token}` } };
  }

  return {
    call, signup, storage, sessions, jwt, options, service,
    advance: (seconds: number) => { now += seconds; },
    now: () => now,
  };
}

/** `Cookie` header carrying the `cookie_session` value from a list of Set-Cookie strings. */
export function cookieHeader(setCookies: string[]): { cookie: string } {
  const line = setCookies.find((c) => c.startsWith('cookie_session='));
  const value = line ? parseCookies(line.split(';')[0])['cookie_session'] : '';
  return { cookie: `cookie_session=${value}` };
}
