/**
 * @module @gatehouse/authn/domain/auth-response
 * AuthResponse with every field present (behaviour.md §2.1, graphql.md §3.1).
 */
import type { UserRecord } from '../storage/ports.ts';
import type { IssuedTokens } from './tokens.ts';
import type { common } from '@gatehouse/contracts';
import { publicUser } from './user.ts';

export interface AuthResponse {
  message: string;
  access_token: string | null;
  id_token: string | null;
  refresh_token: string | null;
  expires_in: number | null;
  user: common.User | null;
  should_show_email_otp_screen: boolean;
  should_show_mobile_otp_screen: boolean;
  should_show_totp_screen: boolean;
  should_offer_webauthn_mfa_verify: boolean;
  should_offer_webauthn_mfa_setup: boolean;
  should_offer_email_otp_mfa_setup: boolean;
  should_offer_sms_otp_mfa_setup: boolean;
  /** deprecated, always false */
  should_offer_mfa_setup: boolean;
  authenticator_scanner_image: string | null;
  authenticator_secret: string | null;
  authenticator_recovery_codes: string[] | null;
}

/** An AuthResponse with nothing issued: tokens and user null, booleans false. */
export function emptyAuthResponse(message: string): AuthResponse {
  return {
    message,
    access_token: null,
    id_token: null,
    refresh_token: null,
    expires_in: null,
    user: null,
    should_show_email_otp_screen: false,
    should_show_mobile_otp_screen: false,
    should_show_totp_screen: false,
    should_offer_webauthn_mfa_verify: false,
    should_offer_webauthn_mfa_setup: false,
    should_offer_email_otp_mfa_setup: false,
    should_offer_sms_otp_mfa_setup: false,
    should_offer_mfa_setup: false,
    authenticator_scanner_image: null,
    authenticator_secret: null,
    authenticator_recovery_codes: null,
  };
}

/** The AuthResponse of a call that issued `tokens` to `user` (behaviour.md §2.2 "any response that issues tokens"). */
export function tokenAuthResponse(message: string, tokens: IssuedTokens, user: UserRecord): AuthResponse {
  return {
    ...emptyAuthResponse(message),
    access_token: tokens.accessToken,
    id_token: tokens.idToken,
    refresh_token: tokens.refreshToken,
    expires_in: tokens.expiresIn,
    user: publicUser(user),
  };
}
