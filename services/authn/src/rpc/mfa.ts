/**
 * @module @gatehouse/authn/rpc/mfa
 * The domain's {@link MfaChallenges} over the mfa service's internal API (proto `MfaInternal`, in
 * process or gRPC), bound to one call: the caller's `mfa` cookie goes to mfa with `ctx`, and the
 * cookie mfa sets or clears comes back through `ctx.setCookies`.
 */
import { COOKIE_MFA, parseCookies } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import type { ChannelChallenge, MfaChallenges } from '../domain/deps.ts';
import { publicUser } from '../domain/user.ts';
import type { MfaInternalClient } from './deps.ts';

/** The challenges of `client` for the call `ctx`; null without the mfa service. */
export function mfaChallengesOf(client: MfaInternalClient | undefined, ctx: CallContext): MfaChallenges | null {
  if (!client) return null;
  const openOtp = async (ch: ChannelChallenge): Promise<void> => {
    const { grant } = ch;
    await client.OpenOtpChallenge({
      user: publicUser(ch.user), channel: ch.channel, purpose: ch.purpose ?? 'login',
      login_method: grant.loginMethod, roles: grant.roles, scope: grant.scope, state: ch.state, auth_time: grant.authTime,
      signup_verification: ch.signupVerification === true, decoy: ch.decoy === true,
    }, ctx);
  };
  return {
    openEmailOtp: (ch) => openOtp({ ...ch, channel: 'email' }),
    openOtp,
    async verifyOtp(a) {
      const v = await client.VerifyOtpChallenge({
        email: a.email, phone_number: a.phoneNumber, otp: a.otp, is_totp: a.isTotp, state: a.state, purpose: a.purpose,
      }, ctx);
      return {
        userId: v.user_id, verifiedChannel: v.verified_channel, verifiedContact: v.verified_contact,
        grant: { loginMethod: v.login_method, roles: v.roles, scope: v.scope, authTime: v.auth_time },
      };
    },
    hasSession: () => Boolean(parseCookies(ctx.headers.cookie)[COOKIE_MFA]),
  };
}
