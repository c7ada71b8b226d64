/**
 * @module @gatehouse/mfa/rpc/passkeys
 * The public passkey RPCs of MfaService (behaviour.md §4.3): WebauthnRegistrationOptions,
 * WebauthnLoginOptions, WebauthnCredentials, WebauthnDeleteCredential. Wire ↔ domain, the caller (a
 * signed-in user, else the `mfa` cookie), and the audit records bound to the call.
 */
import { auditRecord, COOKIE_MFA, parseCookies } from '@gatehouse/auth';
import type { common, mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from '../domain/deps.ts';
import { requireMfaSession, type SessionClaim } from '../domain/mfa-session.ts';
import { loginOptions } from '../domain/passkey-login.ts';
import { registrationOptions, type Registrant } from '../domain/passkey-registration.ts';
import { deletePasskey, listPasskeys, PASSKEY_DELETED, type Auditor } from '../domain/passkeys.ts';
import { mfaHandleOf, setMfaCookie } from './cookies.ts';

/** The `audit.recorded` events of this call (libs/auth auditRecord). */
export const auditorOf = (ctx: CallContext): Auditor => (action, details) => auditRecord(ctx, action, details);

/** @throws AppError `unauthenticated` `unauthorized` without a user credential (or without a session store) */
async function requireUserId(c: MfaContext, ctx: CallContext): Promise<string> {
  if (!c.authenticator) throw new AppError('unauthenticated', 'unauthorized', { reason: 'no_session_store' });
  return (await c.authenticator.requireUser(ctx)).userId;
}

/**
 * The registrant of a `user or MFA session` call (behaviour.md §4.3): a signed-in user, failing that
 * the caller's MFA session (whose user `claim` must name, §4.2).
 * @throws AppError `unauthenticated` `invalid session` / `unauthorized`
 */
async function registrantOf(c: MfaContext, ctx: CallContext, claim: SessionClaim): Promise<Registrant> {
  if (c.authenticator) {
    try {
      const caller = await c.authenticator.requireUser(ctx);
      const email = caller.claims?.email;
      return { kind: 'user', userId: caller.userId, userName: typeof email === 'string' && email ? email : caller.userId };
    } catch (err) {
      if (!parseCookies(ctx.headers.cookie)[COOKIE_MFA]) throw err;
    }
  }
  return sessionRegistrant(c, ctx, claim);
}

/** The registrant of the caller's MFA session. @throws AppError `unauthenticated` `invalid session` */
export const sessionRegistrant = async (c: MfaContext, ctx: CallContext, claim: SessionClaim): Promise<Registrant> =>
  ({ kind: 'mfa', session: await requireMfaSession(c, mfaHandleOf(ctx), claim, 'login') });

/** @throws AppError as {@link registrationOptions} and {@link registrantOf} */
export const webauthnRegistrationOptionsRpc = (c: MfaContext) =>
  async (req: mfa.WebauthnRegistrationOptionsRequest, ctx: CallContext): Promise<mfa.WebauthnRegistrationOptionsResponse> => {
    const registrant = await registrantOf(c, ctx, { email: req.email, phoneNumber: req.phone_number });
    const out = await registrationOptions(c, registrant, mfaHandleOf(ctx));
    if (out.armed) setMfaCookie(ctx, c.options, out.armed);
    return { options: out.options };
  };

/** @throws AppError as {@link loginOptions} */
export const webauthnLoginOptionsRpc = (c: MfaContext) =>
  async (req: mfa.WebauthnLoginOptionsRequest, ctx: CallContext): Promise<mfa.WebauthnLoginOptionsResponse> =>
    ({ options: await loginOptions(c, mfaHandleOf(ctx), req.email) });

/** @throws AppError `unauthenticated` `unauthorized` */
export const webauthnCredentialsRpc = (c: MfaContext) =>
  async (_req: common.Empty, ctx: CallContext): Promise<mfa.WebauthnCredentialsResponse> => {
    const list = await listPasskeys(c, await requireUserId(c, ctx));
    return {
      webauthn_credentials: list.map((p) => ({
        id: p.id, name: p.name, transports: p.transports, created_at: p.createdAt, updated_at: p.updatedAt, last_used_at: p.lastUsedAt,
      })),
    };
  };

/** @throws AppError as {@link deletePasskey}; `unauthenticated` `unauthorized` */
export const webauthnDeleteCredentialRpc = (c: MfaContext) =>
  async (req: mfa.WebauthnDeleteCredentialRequest, ctx: CallContext): Promise<common.Response> => {
    await deletePasskey(c, await requireUserId(c, ctx), req.id, auditorOf(ctx));
    return { message: PASSKEY_DELETED };
  };
