/**
 * @module @gatehouse/mfa/rpc/gate-response
 * A non-issuing gate outcome as the AuthResponse the caller sees (behaviour.md §4.1: tokens, expiry
 * and user null; the screens, offers and a pending TOTP enrolment's secret, QR and recovery codes).
 */
import type { common } from '@gatehouse/contracts';
import type { GateScreens } from '../domain/gate.ts';

/** The AuthResponse of `screens`; nothing is issued. */
export function gateAuthResponse(screens: GateScreens): common.AuthResponse {
  return {
    message: screens.message,
    access_token: null,
    id_token: null,
    refresh_token: null,
    expires_in: null,
    user: null,
    should_show_email_otp_screen: screens.showEmailOtpScreen,
    should_show_mobile_otp_screen: screens.showMobileOtpScreen,
    should_show_totp_screen: screens.showTotpScreen,
    should_offer_webauthn_mfa_verify: screens.offerWebauthnVerify,
    should_offer_webauthn_mfa_setup: screens.offerWebauthnSetup,
    should_offer_email_otp_mfa_setup: screens.offerEmailOtpSetup,
    should_offer_sms_otp_mfa_setup: screens.offerSmsOtpSetup,
    // deprecated, always false (behaviour.md §2.1)
    should_offer_mfa_setup: false,
    authenticator_scanner_image: screens.totp?.scannerImage ?? null,
    authenticator_secret: screens.totp?.secret ?? null,
    authenticator_recovery_codes: screens.totp?.recoveryCodes ?? [],
  };
}
