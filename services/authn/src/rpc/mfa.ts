/**
 * @module @gatehouse/authn/rpc/mfa
 * The domain's {@link MfaChallenges} over the mfa service's internal API (proto `MfaInternal`, in
 * process or gRPC), bound to one call: the caller's `mfa` cookie goes to mfa with `ctx`, and the
 * cookie mfa sets or clears comes back through `ctx.setCookies`.
 */
import type { CallContext } from '@gatehouse/rpc';
import type { mfa } from '@gatehouse/contracts';
import type { MfaChallenges, PasskeyVerdict } from '../domain/deps.ts';
import { publicUser } from '../domain/user.ts';
import type { MfaInternalClient } from './deps.ts';

/** The challenges of `client` for the call `ctx`; null without the mfa service. */
export function mfaChallengesOf(client: MfaInternalClient | undefined, ctx: CallContext): MfaChallenges | null {
  if (!client) return null;
  return {
    async openEmailOtp(ch) {
      const { grant } = ch;
      await client.OpenOtpChallenge({
        user: publicUser(ch.user), channel: 'email', purpose: 'login',
        login_method: grant.loginMethod, roles: grant.roles, scope: grant.scope, state: ch.state, auth_time: grant.authTime,
      }, ctx);
    },
    async verifyOtp(a) {
      const v = await client.VerifyOtpChallenge({ email: a.email, phone_number: a.phoneNumber, otp: a.otp, is_totp: a.isTotp, state: a.state }, ctx);
      return {
        userId: v.user_id, verifiedChannel: v.verified_channel, verifiedContact: v.verified_contact,
        grant: { loginMethod: v.login_method, roles: v.roles, scope: v.scope, authTime: v.auth_time },
      };
    },
    async verifyPasskeyRegistration(a, userId) {
      return passkeyVerdict(await client.VerifyWebauthnRegistration({
        user_id: userId, credential: a.credential ?? '', name: a.name, email: a.email, phone_number: a.phoneNumber,
      }, ctx));
    },
    async verifyPasskeyLogin(credential) {
      return passkeyVerdict(await client.VerifyWebauthnLogin({ credential: credential ?? '' }, ctx));
    },
  };
}

function passkeyVerdict(v: mfa.WebauthnRegistrationVerdict | mfa.WebauthnLoginVerdict): PasskeyVerdict {
  const g = v.grant;
  return {
    userId: v.user_id, passkeyId: v.passkey_id,
    grant: g ? { loginMethod: g.login_method, roles: g.roles, scope: g.scope, authTime: g.auth_time, state: g.state ?? null } : null,
  };
}
