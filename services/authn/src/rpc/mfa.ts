/**
 * @module @gatehouse/authn/rpc/mfa
 * The domain's {@link MfaChallenges} over the mfa service's internal API (proto `MfaInternal`, in
 * process or gRPC), bound to one call: the caller's `mfa` cookie goes to mfa with `ctx`, and the
 * cookie mfa sets or clears comes back through `ctx.setCookies`.
 */
import { auditRecord, COOKIE_MFA, parseCookies } from '@gatehouse/auth';
import type { mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { Audit, ChannelChallenge, MfaChallenges, MfaVerdict, PasskeyVerdict } from '../domain/deps.ts';
import { publicUser } from '../domain/user.ts';
import type { MfaInternalClient, RpcContext } from './deps.ts';

const verdictOf = (v: mfa.MfaVerdict): MfaVerdict => ({
  userId: v.user_id, verifiedChannel: v.verified_channel, verifiedContact: v.verified_contact,
  grant: { loginMethod: v.login_method, roles: v.roles, scope: v.scope, authTime: v.auth_time, amr: v.amr },
  enrolledMethod: v.enrolled_method,
});

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
      return verdictOf(await client.VerifyOtpChallenge({
        email: a.email, phone_number: a.phoneNumber, otp: a.otp, is_totp: a.isTotp, state: a.state, purpose: a.purpose,
      }, ctx));
    },
    async evaluateGate(user, grant, state) {
      const d = await client.EvaluateGate({
        user: publicUser(user), login_method: grant.loginMethod, roles: grant.roles, scope: grant.scope, state, auth_time: grant.authTime,
      }, ctx);
      return { outcome: d.outcome, response: d.outcome === 'issue' ? null : d.response ?? null };
    },
    async skip(claim) {
      return verdictOf(await client.SkipMfaSetup({ email: claim.email, phone_number: claim.phoneNumber }, ctx));
    },
    async lock(claim) {
      return (await client.LockMfa({ email: claim.email, phone_number: claim.phoneNumber }, ctx)).user_id;
    },
    async beginOtpEnrolment(channel, caller, claim) {
      await client.BeginOtpEnrolment({
        channel,
        user: caller ? publicUser(caller.user) : null,
        login_method: caller?.grant.loginMethod ?? '', roles: caller?.grant.roles ?? [], scope: caller?.grant.scope ?? [],
        auth_time: caller?.grant.authTime ?? 0,
        email: claim.email, phone_number: claim.phoneNumber,
      }, ctx);
    },
    async beginTotpEnrolment(user, grant) {
      return client.BeginTotpEnrolment({
        user: publicUser(user), login_method: grant.loginMethod, roles: grant.roles, scope: grant.scope, auth_time: grant.authTime,
      }, ctx);
    },
    async resetUserMfa(userId) {
      return (await client.ResetUserMfa({ user_id: userId }, ctx)).deleted;
    },
    async enrolledMethods(userIds) {
      const res = await client.EnrolledMfaMethods({ user_ids: [...userIds] }, ctx);
      return new Map(res.users.map((u) => [u.user_id, u.methods]));
    },
    hasSession: () => Boolean(parseCookies(ctx.headers.cookie)[COOKIE_MFA]),
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

/** The domain's {@link Audit} for the call `ctx` (libs/auth `auditRecord`). */
export const auditOf = (ctx: CallContext): Audit => (action, details) => auditRecord(ctx, action, details);

/** The user's `enrolled_mfa_methods` (behaviour.md §5.3) from mfa; [] without the mfa service. */
export async function enrolledOf(c: RpcContext, ctx: CallContext, userId: string): Promise<string[]> {
  const mfa = mfaChallengesOf(c.mfa, ctx);
  return mfa ? ((await mfa.enrolledMethods([userId])).get(userId) ?? []) : [];
}
