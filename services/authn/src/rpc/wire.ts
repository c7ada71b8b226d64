/**
 * @module @gatehouse/authn/rpc/wire
 * Wire ↔ domain conversions shared by several authn RPCs: the profile fields of a request, and the
 * AuthResponse of behaviour.md §2.1 (every field present; tokens, expires_in, user and
 * authenticator_* null when not issued).
 */
import type { authn, common } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { AuthOutcome, Issued } from '../domain/issue.ts';
import type { AuthnOptions } from '../domain/options.ts';
import { publicUser, type ProfileFields } from '../domain/user.ts';
import { setSessionCookies } from './cookies.ts';

/** The AuthResponse of a flow: `issued`'s tokens and user, or none of them. */
function authResponse(message: string, issued: Issued | null, showEmailOtpScreen: boolean): common.AuthResponse {
  const tokens = issued?.tokens;
  return {
    message,
    access_token: tokens ? tokens.accessToken : null,
    id_token: tokens ? tokens.idToken : null,
    refresh_token: tokens ? tokens.refreshToken : null,
    expires_in: tokens ? tokens.expiresIn : null,
    user: issued ? publicUser(issued.user, issued.enrolledMfaMethods) : null,
    should_show_email_otp_screen: showEmailOtpScreen,
    should_show_mobile_otp_screen: false,
    should_show_totp_screen: false,
    should_offer_webauthn_mfa_verify: false,
    should_offer_webauthn_mfa_setup: false,
    should_offer_email_otp_mfa_setup: false,
    should_offer_sms_otp_mfa_setup: false,
    // deprecated, always false (behaviour.md §2.1)
    should_offer_mfa_setup: false,
    authenticator_scanner_image: null,
    authenticator_secret: null,
    // an empty list is null on the wire (the codec's nullable list): none issued
    authenticator_recovery_codes: [],
  };
}

/**
 * Sets the session cookies when a session was opened, and answers with the AuthResponse.
 * @param emailOtpSent login step 8: the email OTP screen comes next (behaviour.md §3.3)
 */
export function issuedResponse(ctx: CallContext, options: AuthnOptions, message: string, issued: Issued | null, emailOtpSent = false): common.AuthResponse {
  if (issued?.cookie) setSessionCookies(ctx, options, issued.cookie);
  return authResponse(message, issued, emailOtpSent);
}

/**
 * {@link issuedResponse} for a login-type flow's outcome; a gated outcome answers mfa's AuthResponse
 * as is (tokens null; the `mfa` cookie is already on the call).
 */
export function outcomeResponse(ctx: CallContext, options: AuthnOptions, outcome: AuthOutcome): common.AuthResponse {
  if (outcome.gate) return outcome.gate;
  return issuedResponse(ctx, options, outcome.message, outcome.issued, outcome.emailOtpSent);
}

/** The profile fields of a signup or update_profile request. */
export function profileFieldsOf(req: Pick<authn.SignUpRequest, 'given_name' | 'family_name' | 'middle_name' | 'nickname' | 'gender' | 'birthdate'>): ProfileFields {
  return {
    givenName: req.given_name, familyName: req.family_name, middleName: req.middle_name,
    nickname: req.nickname, gender: req.gender, birthdate: req.birthdate,
  };
}
