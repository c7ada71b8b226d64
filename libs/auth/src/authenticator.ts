/**
 * @module @gatehouse/auth/authenticator
 * Credential resolution shared by every service (behaviour.md §2.3): bearer access token, then
 * `cookie_session`, then `cookie_session_domain`; admin via the `service-admin` cookie, then the
 * `x-service-admin-secret` header. Every failure is 401 `unauthenticated` `unauthorized`.
 */
import { AppError } from '@gatehouse/errors';
import { sha256Hex, type JwtSigner, type JWTPayload } from '@gatehouse/crypto';
import type { CallContext } from '@gatehouse/rpc';
import { COOKIE_ADMIN, COOKIE_SESSION, COOKIE_SESSION_DOMAIN, parseCookies } from './cookies.ts';
import { SESSION_TOUCH_INTERVAL_SECONDS, type SessionRecord, type SessionStore } from './session-store.ts';
import type { CacheVersion } from './session-cache.ts';
import type { AttemptLog } from './lockout.ts';
import { verifyAdminSecret } from './admin-access.ts';
import { delegationOfClaims, noteDelegation, type Delegation } from './delegation.ts';

export interface UserCaller {
  kind: 'user';
  userId: string;
  sessionId: string;
  /** granted roles of the token or session */
  roles: string[];
  scope: string[];
  loginMethod: string;
  via: 'bearer' | 'cookie';
  /** the live session the credential is bound to */
  session: SessionRecord;
  /** the verified access-token claims (bearer only) */
  claims?: JWTPayload;
  /**
   * present when the bearer token was issued by RFC 8693 token exchange: the agent (`act`) acting for
   * this user (issue 34 §3; see delegation.ts)
   */
  delegation?: Delegation;
}

export interface AdminCaller {
  kind: 'admin';
  via: 'cookie' | 'header';
}

/**
 * A client_credentials token's caller (behaviour.md §2.3, §7.2): subject `service_account:<client_id>`.
 * Accepted only where {@link Authenticator.resolveCaller} is asked (check_permissions,
 * list_permissions); every user-class RPC refuses it.
 */
export interface ServiceAccountCaller {
  kind: 'service_account';
  clientId: string;
  /** `service_account:<client_id>` */
  subject: string;
  scope: string[];
  session: SessionRecord;
}

/** The `sub` prefix of service-account tokens (behaviour.md §7.2). */
export const SERVICE_ACCOUNT_PREFIX = 'service_account:';

export interface AuthenticatorOptions {
  jwt: Pick<JwtSigner, 'verify'>;
  /**
   * With `version` (a cached store, see session-cache.ts), and `users` absent or versioned too, the
   * authenticator remembers resolved bearer callers while both versions stay unchanged.
   */
  sessions: Pick<SessionStore, 'get' | 'findByHandleHash'> & Partial<CacheVersion> & Partial<Pick<SessionStore, 'touch'>>;
  /** `--url`; access tokens must carry it as `iss` */
  issuer: string;
  /** `--admin-secret` */
  adminSecret: string;
  /** `--disable-admin-header-auth` */
  disableAdminHeaderAuth: boolean;
  /** `--client-id` (first-party audience; recorded, not enforced: OAuth clients' tokens have their own `aud`) */
  clientId: string;
  /** the admin service's session check, for the `service-admin` cookie (absent: the cookie is ignored) */
  adminSessions?: { isValid(handle: string): Promise<boolean> };
  /**
   * Admin-secret failures per client IP, shared by the deployment (behaviour.md §5.1, §10): 10 failed
   * comparisons in 15 min → every `x-service-admin-secret` attempt from that IP is 429 (absent: no lockout)
   */
  adminSecretFailures?: AttemptLog;
  /** optional liveness check of the user (revoked or deleted users fail, behaviour.md §2.1) */
  users?: { isActive(userId: string): Promise<boolean> } & Partial<CacheVersion>;
  /** Unix seconds */
  clock?: () => number;
}

export interface Authenticator {
  /** @throws AppError `unauthenticated` `unauthorized` */
  requireUser(ctx: CallContext): Promise<UserCaller>;
  /** @throws AppError `unauthenticated` `unauthorized` */
  requireAdmin(ctx: CallContext): Promise<AdminCaller>;
  /**
   * Super-admin credential if valid, else a user credential, else a service-account token (the
   * `permissions` class, behaviour.md §2.3). @throws AppError `unauthenticated` `unauthorized`
   */
  resolveCaller(ctx: CallContext): Promise<UserCaller | AdminCaller | ServiceAccountCaller>;
  /** The caller's session from its session cookies only (no bearer), or null. */
  sessionFromCookies(ctx: CallContext): Promise<SessionRecord | null>;
}

const SERVICE_ACCOUNT_REASON = 'service_account_token';

const unauthorized = (reason: string, cause?: unknown): AppError =>
  new AppError('unauthenticated', 'unauthorized', { reason, ...(cause === undefined ? {} : { cause }) });

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * The scopes of an access token's `scope` claim: RFC 9068 §2.2.3 / RFC 8693 §4.2 make it one
 * space-delimited string (the OAuth endpoints' tokens); Gatehouse's first-party `/v1` tokens carry a JSON
 * array. Either shape in, the list out; anything else is no scope.
 */
export function scopeClaim(v: unknown): string[] {
  return typeof v === 'string' ? v.split(' ').filter((s) => s !== '') : strings(v);
}

/** How many resolved bearer callers are remembered (oldest dropped first), as many as verified tokens. */
export const RESOLVED_CALLER_CACHE_SIZE = 4096;
/**
 * Longest Authorization header whose caller is remembered, in characters. A valid header can be padded
 * with whitespace up to node's header size limit; this bounds the cache's memory (≈ 16 MiB of keys at most).
 */
export const RESOLVED_CALLER_MAX_HEADER_CHARS = 4096;
/** A remembered bearer caller is resolved again after this many seconds at most (defence in depth, as the caches' TTL). */
export const RESOLVED_CALLER_TTL_SECONDS = 30;

/** How many sessions' last touch times are remembered (oldest dropped first). */
export const SESSION_TOUCH_MEMORY = 16384;

/** A bearer caller resolved once, and what must still hold to answer it again without reading. */
interface ResolvedBearer {
  readonly caller: UserCaller;
  /** the session and activity cache versions read before the reads that resolved it */
  readonly sessionsVersion: number;
  readonly usersVersion: number;
  /** Unix seconds */
  readonly resolvedAt: number;
}

/** Freezes a caller, its arrays, session and claims: one object is handed to every request with the same token. */
function freezeCaller(c: UserCaller): UserCaller {
  Object.freeze(c.roles);
  Object.freeze(c.scope);
  Object.freeze(c.session.roles);
  Object.freeze(c.session.scope);
  Object.freeze(c.session);
  if (c.claims) {
    for (const v of Object.values(c.claims)) if (typeof v === 'object' && v !== null) Object.freeze(v);
    Object.freeze(c.claims);
  }
  return Object.freeze(c);
}

/** `exp` and `nbf` of verified claims against `now` (Unix seconds), as the signer checks them (RFC 7519 §4.1.4, §4.1.5). */
function timeClaimsHold(claims: JWTPayload | undefined, now: number): boolean {
  if (typeof claims?.exp === 'number' && claims.exp <= now) return false;
  if (typeof claims?.nbf === 'number' && claims.nbf > now) return false;
  return true;
}

/**
 * Builds the authenticator. Access-token validation (behaviour.md §2.1): signature with the primary
 * or secondary key, `exp`, `iss` = `--url`, `token_type` = `access_token`, the session named by
 * `nonce` exists, belongs to `sub` and is unexpired, and (when `users` is given) the user is active.
 */
export function createAuthenticator(o: AuthenticatorOptions): Authenticator {
  const clock = o.clock ?? (() => Math.floor(Date.now() / 1000));

  const userActive = async (userId: string): Promise<boolean> => (o.users ? o.users.isActive(userId) : true);

  // Resolved bearer callers, by the raw Authorization header. Only when every read behind a caller
  // is cached and versioned: an unchanged version means no session or user was written since (a
  // logout, rotation, revocation or an outside write changes it), so the answer still holds.
  const sessionsVersion = o.sessions.version?.bind(o.sessions);
  const usersVersion = o.users === undefined ? () => 0 : o.users.version?.bind(o.users);
  const resolved = sessionsVersion && usersVersion ? new Map<string, ResolvedBearer>() : null;

  /** The remembered caller of `header` when every condition it was resolved under still holds. */
  function rememberedBearer(header: string): UserCaller | undefined {
    const r = resolved!.get(header);
    if (r === undefined) return undefined;
    const now = clock();
    if (r.sessionsVersion === sessionsVersion!() && r.usersVersion === usersVersion!()
      && now - r.resolvedAt < RESOLVED_CALLER_TTL_SECONDS
      && r.caller.session.expiresAt > now && timeClaimsHold(r.caller.claims, now)) return r.caller;
    resolved!.delete(header);
    return undefined;
  }

  // Not async: a remembered caller comes back as an already-settled promise, with no extra hops
  // through async wrappers (each returned promise costs microtask turns per request).
  function fromBearer(header: string): Promise<UserCaller> {
    if (resolved === null || header.length > RESOLVED_CALLER_MAX_HEADER_CHARS) return resolveBearer(header);
    const known = rememberedBearer(header);
    return known !== undefined ? Promise.resolve(known) : resolveAndRemember(header);
  }

  async function resolveAndRemember(header: string): Promise<UserCaller> {
    // the versions before the reads: a write that lands while they run makes this entry stale at once
    const sv = sessionsVersion!();
    const uv = usersVersion!();
    const caller = freezeCaller(await resolveBearer(header));
    const remembered = resolved!;
    if (remembered.size >= RESOLVED_CALLER_CACHE_SIZE) remembered.delete(remembered.keys().next().value!);
    remembered.set(header, { caller, sessionsVersion: sv, usersVersion: uv, resolvedAt: clock() });
    return caller;
  }

  async function resolveBearer(header: string): Promise<UserCaller> {
    const parts = header.trim().split(/\s+/);
    if (parts.length !== 2 || parts[0]!.toLowerCase() !== 'bearer' || !parts[1]) throw unauthorized('bearer_malformed');
    let claims: JWTPayload;
    try {
      claims = await o.jwt.verify(parts[1], { nowSeconds: clock() });
    } catch (err) {
      throw unauthorized('bearer_invalid', err);
    }
    if (claims.iss !== o.issuer || claims.token_type !== 'access_token') throw unauthorized('bearer_claims');
    if (typeof claims.sub !== 'string' || typeof claims.nonce !== 'string') throw unauthorized('bearer_claims');
    // RFC 9449 §7.1: a DPoP-bound token (`cnf.jkt`) is no bearer token; only a proof by its key presents it
    if (claims.cnf !== undefined) throw unauthorized('bearer_dpop_bound');
    // a service account is no user: refused here, accepted by resolveCaller only (behaviour.md §2.3)
    if (claims.sub.startsWith(SERVICE_ACCOUNT_PREFIX)) throw unauthorized(SERVICE_ACCOUNT_REASON);
    const session = await o.sessions.get(claims.nonce);
    if (!session || session.userId !== claims.sub || session.expiresAt <= clock()) throw unauthorized('session_gone');
    if (!(await userActive(session.userId))) throw unauthorized('user_inactive');
    const delegation = delegationOfClaims(claims);
    return {
      kind: 'user',
      userId: claims.sub,
      sessionId: session.id,
      roles: strings(claims.roles),
      scope: scopeClaim(claims.scope),
      loginMethod: typeof claims.login_method === 'string' ? claims.login_method : session.loginMethod,
      via: 'bearer',
      session,
      claims,
      ...(delegation ? { delegation } : {}),
    };
  }

  /**
   * A client_credentials token: signature, `iss`, `token_type`, and its session (keyed by the client's
   * id, login method `client_credentials`) still live; deactivating or deleting the client deletes it.
   */
  async function resolveServiceAccount(header: string): Promise<ServiceAccountCaller> {
    const token = header.trim().split(/\s+/)[1] ?? '';
    let claims: JWTPayload;
    try {
      claims = await o.jwt.verify(token, { nowSeconds: clock() });
    } catch (err) {
      throw unauthorized('bearer_invalid', err);
    }
    const sub = typeof claims.sub === 'string' ? claims.sub : '';
    if (claims.iss !== o.issuer || claims.token_type !== 'access_token' || typeof claims.nonce !== 'string') throw unauthorized('bearer_claims');
    if (claims.cnf !== undefined) throw unauthorized('bearer_dpop_bound');
    const clientId = sub.slice(SERVICE_ACCOUNT_PREFIX.length);
    const session = await o.sessions.get(claims.nonce);
    if (!session || session.userId !== clientId || session.loginMethod !== 'client_credentials' || session.expiresAt <= clock()) throw unauthorized('session_gone');
    return { kind: 'service_account', clientId, subject: sub, scope: scopeClaim(claims.scope), session };
  }

  async function sessionFromCookies(ctx: CallContext): Promise<SessionRecord | null> {
    const cookies = parseCookies(ctx.headers.cookie);
    for (const name of [COOKIE_SESSION, COOKIE_SESSION_DOMAIN]) {
      const handle = cookies[name];
      if (!handle) continue;
      const session = await o.sessions.findByHandleHash(sha256Hex(handle));
      if (session && session.expiresAt > clock()) return session;
    }
    return null;
  }

  // issue 33: a user caller's session records its last use, at most once per SESSION_TOUCH_INTERVAL_SECONDS
  // per session and process: the time of this process's last touch is remembered here, since a cached
  // record's `lastUsedAt` may lag. The write is not awaited and its failure is ignored (a lost last-use
  // time is shown a minute late, never refuses the request).
  const touch = o.sessions.touch?.bind(o.sessions);
  const touchedAt = new Map<string, number>();
  function noteUse(s: SessionRecord): void {
    const now = clock();
    const last = Math.max(s.lastUsedAt ?? s.createdAt, touchedAt.get(s.id) ?? 0);
    if (now - last < SESSION_TOUCH_INTERVAL_SECONDS) return;
    touchedAt.delete(s.id);
    if (touchedAt.size >= SESSION_TOUCH_MEMORY) touchedAt.delete(touchedAt.keys().next().value!);
    touchedAt.set(s.id, now);
    touch!(s, now).catch(() => undefined);
  }

  // The caller of one call, resolved once: the auth guard of libs/rpc checks the RPC's auth class
  // before the handler, which asks again for the identity; the second ask costs no read.
  const userOfCall = new WeakMap<CallContext, Promise<UserCaller>>();

  function requireUser(ctx: CallContext): Promise<UserCaller> {
    const known = userOfCall.get(ctx);
    if (known !== undefined) return known;
    const header = ctx.headers.authorization;
    // If the header is present it alone decides: no cookie fallback (behaviour.md §2.3).
    let caller = header !== undefined && header !== '' ? fromBearer(header) : fromCookies(ctx);
    // a delegated token's call is remembered as such, for the audit rows it records (delegation.ts)
    if (header !== undefined && header !== '') caller = caller.then((c) => { noteDelegation(ctx, c.delegation); return c; });
    if (touch) caller = caller.then((c) => { noteUse(c.session); return c; });
    userOfCall.set(ctx, caller);
    return caller;
  }

  async function fromCookies(ctx: CallContext): Promise<UserCaller> {
    const session = await sessionFromCookies(ctx);
    if (!session) throw unauthorized('no_credentials');
    if (!(await userActive(session.userId))) throw unauthorized('user_inactive');
    return {
      kind: 'user',
      userId: session.userId,
      sessionId: session.id,
      roles: [...session.roles],
      scope: [...session.scope],
      loginMethod: session.loginMethod,
      via: 'cookie',
      session,
    };
  }

  /**
   * The `x-service-admin-secret` header (unless `--disable-admin-header-auth`), through the one
   * counted comparison ({@link verifyAdminSecret}): a locked client IP is refused before comparing,
   * and a wrong secret counts one failure for the IP (§5.1).
   * @throws AppError `resource_exhausted` while the caller's IP is locked
   */
  async function adminFromHeader(ctx: CallContext): Promise<AdminCaller | null> {
    const secret = ctx.headers['x-service-admin-secret'];
    if (o.disableAdminHeaderAuth || !secret) return null;
    return (await verifyAdminSecret(o.adminSecretFailures, ctx.clientIp, secret, o.adminSecret, clock())) ? { kind: 'admin', via: 'header' } : null;
  }

  // One answer per call: the guard and the handler may both ask, and a wrong secret counts once.
  const adminOfCall = new WeakMap<CallContext, Promise<AdminCaller | null>>();

  /** The `service-admin` cookie, then the admin-secret header. */
  function adminOrNull(ctx: CallContext): Promise<AdminCaller | null> {
    const known = adminOfCall.get(ctx);
    if (known !== undefined) return known;
    const handle = ctx.headers.cookie === undefined ? undefined : parseCookies(ctx.headers.cookie)[COOKIE_ADMIN];
    const answer = handle && o.adminSessions
      ? o.adminSessions.isValid(handle).then((ok) => (ok ? { kind: 'admin', via: 'cookie' } as const : adminFromHeader(ctx)))
      : adminFromHeader(ctx);
    adminOfCall.set(ctx, answer);
    return answer;
  }

  return {
    requireUser,
    sessionFromCookies,
    async requireAdmin(ctx) {
      const admin = await adminOrNull(ctx);
      if (!admin) throw unauthorized('not_admin');
      return admin;
    },
    resolveCaller(ctx) {
      // without an admin credential nothing is read for it: straight to the user credential
      const userOrServiceAccount = (): Promise<UserCaller | ServiceAccountCaller> => requireUser(ctx).catch((err: unknown) => {
        const header = ctx.headers.authorization;
        if (err instanceof AppError && err.reason === SERVICE_ACCOUNT_REASON && header) return resolveServiceAccount(header);
        throw err;
      });
      if (!ctx.headers['x-service-admin-secret'] && !(ctx.headers.cookie ?? '').includes(COOKIE_ADMIN)) return userOrServiceAccount();
      return adminOrNull(ctx).then((a): Promise<UserCaller | AdminCaller | ServiceAccountCaller> | AdminCaller => a ?? userOrServiceAccount());
    },
  };
}
