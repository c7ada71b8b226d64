/**
 * @module @gatehouse/mfa/fixture
 * Test fixture (used by *.test.ts only): the mfa domain context and the mfa service on one memory
 * store, with a clock the test turns, and readers for the `email.send` jobs the store committed.
 */
import { openJobSecret, type KeyRing } from '@gatehouse/crypto';
import { randomUUID } from 'node:crypto';
import type { Authenticator } from '@gatehouse/auth';
import type { common, mfa } from '@gatehouse/contracts';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import { createLogger } from '@gatehouse/observability';
import { createCallContext, createInProcessClient, typedClient, type CallContext, type ServiceImplementation, type ProtoServiceName } from '@gatehouse/rpc';
import { openOtpChallenge, type OtpChallenge } from './domain/challenge.ts';
import { createMfaContext } from './domain/deps.ts';
import type { MfaOptions } from './domain/options.ts';
import { createMfaService } from './service.ts';
import { createMemoryMfaStore } from './storage/memory.ts';
import type { MfaSessionRecord } from './storage/ports.ts';

/** The fixture clock's start, Unix seconds. */
export const T0 = 1_800_000_000;

/** SMTP configured, Secure SameSite=Lax cookies, an explicit --encryption-key. */
export const OPTIONS: MfaOptions = {
  url: 'https://auth.example.com', appCookieSecure: true, appCookieSameSite: 'lax',
  encryptionKey: 'k'.repeat(32), clientSecret: 'client-secret',
  smtpHost: 'smtp.example.com', smtpPort: 587, smtpSenderEmail: 'noreply@example.com',
  organizationName: 'Gatehouse', enforceMfa: false, disableMfa: false, disableTotpLogin: false, disableEmailOtp: false,
  disableSmsOtp: false, disableWebauthnMfa: false,
};

/** A user as authn hands it to OpenOtpChallenge (the wire User's fields), email unverified. */
export const user = (id = 'u-ada', over: Partial<common.User> = {}): common.User => ({
  id, email: `${id}@example.com`, email_verified: false, signup_methods: 'basic_auth', phone_number: '+15550100',
  phone_number_verified: false, roles: ['user'], created_at: T0 - 86_400, updated_at: T0 - 86_400, enrolled_mfa_methods: [], ...over,
});

/** The first step of a login (behaviour.md §3.3 step 8) for `u`, as authn asks for it. */
export const loginChallenge = (u: common.User | null, over: Partial<OtpChallenge> = {}): OtpChallenge => ({
  user: u, channel: 'email', purpose: 'login', loginMethod: 'basic_auth', roles: ['user'], scope: ['openid', 'email'], state: 'st-1', authTime: 0, ...over,
});

/** The same first step as OpenOtpChallenge's wire request. */
export const openRequest = (u: common.User, over: Partial<mfa.OpenOtpChallengeRequest> = {}): mfa.OpenOtpChallengeRequest => ({
  user: u, channel: 'email', purpose: 'login', login_method: 'basic_auth', roles: ['user'], scope: ['openid', 'email'], state: 'st-1', auth_time: 0,
  signup_verification: false, decoy: false, ...over,
});

/** The `email.send` job of a code (events.ts). */
export interface OtpMail {
  event_name: string;
  to: string;
  user: Record<string, unknown>;
  variables: { otp: string };
}

/**
 * An `email.send` job's data as the worker reads it: its `sealed_variables` (issue 23) opened with
 * `jobKey` into `variables`.
 * @throws AppError `internal` when they do not open
 */
export function openOtpMail(jobKey: KeyRing, data: unknown): OtpMail {
  const job = data as OtpMail & { sealed_variables?: string };
  if (!job.sealed_variables) return job;
  return { ...job, variables: JSON.parse(openJobSecret(jobKey, 'email.send', job.to, job.sealed_variables)) as OtpMail['variables'] };
}

/** The `sms.send` job's code as the worker reads it: `sealed_otp` opened with `jobKey`. */
export function openSmsOtp(jobKey: KeyRing, data: unknown): string {
  const job = data as { to: string; otp: string; sealed_otp?: string };
  return job.sealed_otp ? openJobSecret(jobKey, 'sms.send', job.to, job.sealed_otp) : job.otp;
}

/** The `Cookie` header carrying the `mfa` cookie of a Set-Cookie value, or of a bare handle. */
export const mfaCookieHeader = (setCookieOrHandle: string): string =>
  setCookieOrHandle.startsWith('mfa=') ? setCookieOrHandle.split(';')[0]! : `mfa=${setCookieOrHandle}`;

/** A call context carrying `cookie` (a Cookie header value), if any. */
export const withCookie = (cookie?: string): CallContext => createCallContext({ headers: cookie ? { cookie } : {} });

const clientOf = <N extends ProtoServiceName>(impl: ServiceImplementation<N>) => typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));

/**
 * Builds mfa on an empty memory store at {@link T0}. `c` is the domain context; `internal` and
 * `public` are typed in-process clients of the service built from the same deps.
 * @param over option overrides (`smtpHost: undefined` turns email off)
 * @param extra `authenticator` (default null: no session store); `clock` replaces the fixture clock
 */
export function makeMfa(over: Partial<MfaOptions> = {}, extra: { authenticator?: Authenticator | null; clock?: () => number } = {}) {
  let now = T0;
  const clock = extra.clock ?? (() => now);
  const store = createMemoryMfaStore({ clock });
  const deps = { options: { ...OPTIONS, ...over }, store, authenticator: extra.authenticator ?? null, logger: createLogger('silent'), clock };
  const c = createMfaContext(deps);
  const service = createMfaService(deps);

  /** every `email.send` job committed so far, oldest first */
  const mails = (): OtpMail[] => store.published.filter((e) => e.name === 'email.send').map((e) => openOtpMail(c.jobKey, e.data));
  /** the codes mailed to `to`, oldest first */
  const codesFor = (to: string): string[] => mails().filter((m) => m.to === to).map((m) => m.variables.otp);
  /** the newest code mailed to `to` */
  const lastCode = (to: string): string => {
    const code = codesFor(to).at(-1);
    if (!code) throw new Error(`no code mailed to ${to}`);
    return code;
  };

  const internal = clientOf(service.internal);
  return {
    c, store, service, mails, codesFor, lastCode, internal,
    public: clientOf(service.public),
    now: (): number => now,
    /** turns the fixture clock `seconds` forward */
    advance(seconds: number): void {
      now += seconds;
    },
    /** opens a login challenge for `u` in the domain; resolves with the handle its `mfa` cookie carries */
    async open(u: common.User = user(), challenge: Partial<OtpChallenge> = {}): Promise<string> {
      return (await openOtpChallenge(c, loginChallenge(u, challenge))).handle;
    },
    /**
     * Calls OpenOtpChallenge for `u` as authn does; resolves with the response, the `mfa` Set-Cookie
     * value and the `Cookie` header that carries it back.
     */
    async openOverWire(u: common.User = user(), over: Partial<mfa.OpenOtpChallengeRequest> = {}) {
      const ctx = createCallContext();
      const res = await internal.OpenOtpChallenge(openRequest(u, over), ctx);
      const setCookie = ctx.setCookies[0] ?? '';
      return { res, setCookies: ctx.setCookies, setCookie, cookie: mfaCookieHeader(setCookie) };
    },
    /**
     * Stores an MFA session of a kind no flow of this release opens (no channel, SMS, password_reset),
     * as the store holds it; resolves with its handle.
     */
    async seedSession(over: Partial<MfaSessionRecord> = {}): Promise<string> {
      const handle = randomToken(32);
      const u = user();
      await store.transaction((tx) => tx.sessions.create({
        id: randomUUID(), handleHash: sha256Hex(handle), userId: u.id, purpose: 'login', channel: 'email', contact: u.email!, user: { ...u },
        loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], state: null, authTime: now, expiresAt: now + 300, createdAt: now, ...over,
      }));
      return handle;
    },
  };
}

export type MfaFixture = ReturnType<typeof makeMfa>;
