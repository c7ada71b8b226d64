/**
 * @module @gatehouse/mfa/domain/challenge
 * Opening an MFA session with a one-time code on a channel: login of an unverified email or phone
 * (behaviour.md §3.3 step 8), phone signup verification (§3.2, 600 s) and forgot_password by phone
 * (§3.4, purpose `password_reset`, with a decoy for unknown phones). authn asks for it through mfa's
 * internal API.
 */
import { randomUUID } from 'node:crypto';
import { randomToken, sha256Hex } from '@gatehouse/crypto';
import type { common } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import { queueOtp } from '../events.ts';
import type { MfaPurpose, OtpChannel } from '../storage/ports.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { DECOY_LOGIN_METHOD, MFA_SESSION_TTL_SECONDS } from './mfa-session.ts';
import { assertChannelService } from './options.ts';
import { generateOtp, OTP_TTL_SECONDS, otpDigest } from './otp.ts';
import { claimCodeSend, writeClaimedSend } from './send-gate.ts';

/** Lifetime of the session and code of a phone signup verification, seconds (behaviour.md §4.2, §4.4). */
export const SIGNUP_VERIFICATION_TTL_SECONDS = 600;

/** What the first step decided: the user, and the grant tokens are finally issued with (§4.1). */
export interface OtpChallenge {
  /** the user's User record (for the email template's `{{.user.*}}`); needs `id` and the channel's contact */
  user: common.User | null;
  /** `email` or `sms` */
  channel: string;
  /** `login` or `password_reset` (behaviour.md §4.2) */
  purpose: string;
  loginMethod: string;
  roles: readonly string[];
  scope: readonly string[];
  state: string | null;
  /** Unix seconds of the first step; 0 means now */
  authTime: number;
  /** phone signup verification: session and code live 600 s (behaviour.md §4.2, §4.4) */
  signupVerification?: boolean;
  /**
   * forgot_password for an unknown or revoked phone (behaviour.md §3.4): the same session and cookie,
   * no code sent, none accepted; `user` carries a throwaway id and the phone number given
   */
  decoy?: boolean;
}

const CHANNELS: readonly OtpChannel[] = ['email', 'sms'];
const PURPOSES: readonly MfaPurpose[] = ['login', 'password_reset'];

/**
 * Opens an MFA session for `challenge.user` and sends a code to the channel's contact (the user's
 * email, or phone number), unless a code went to that contact less than 30 s ago: then that code
 * stands (behaviour.md §4.4 resend limit; the send is claimed atomically, issue 30 §2). A decoy sends nothing and stores a code nobody
 * knows, so every guess is `invalid otp` like a real session's.
 * @returns the new session's handle and expiry (for the `mfa` cookie), and whether a code was sent
 * @throws AppError `invalid_argument` for an unsupported channel or purpose, or a user without an
 *   id or the channel's contact; `failed_precondition` `email service not enabled` / `SMS service
 *   not enabled` without the channel's provider, or for an SMS to a country outside
 *   `--sms-allowed-country-codes`; `resource_exhausted` when the contact's hourly or daily cap is reached
 */
export async function openOtpChallenge(c: MfaContext, challenge: OtpChallenge): Promise<ArmedSession & { codeSent: boolean }> {
  const channel = challenge.channel as OtpChannel;
  const purpose = challenge.purpose as MfaPurpose;
  if (!CHANNELS.includes(channel)) throw new AppError('invalid_argument', `unsupported OTP channel: ${challenge.channel}`);
  if (!PURPOSES.includes(purpose)) throw new AppError('invalid_argument', `unsupported MFA session purpose: ${challenge.purpose}`);
  const user = challenge.user;
  const userId = user?.id ?? '';
  const contact = (channel === 'email' ? user?.email : user?.phone_number) ?? '';
  if (!user || !userId || !contact) {
    throw new AppError('invalid_argument', `the user needs an id and ${channel === 'email' ? 'an email address' : 'a phone number'}`);
  }
  assertChannelService(c.options, channel);

  const now = c.now();
  const ttl = challenge.signupVerification ? SIGNUP_VERIFICATION_TTL_SECONDS : OTP_TTL_SECONDS;
  const decoy = challenge.decoy === true;
  // claimed before anything is written, for a decoy too (issue 30 §2): of concurrent openings one
  // sends; inside the interval the code already sent stands (§4.4)
  const keep = !(await claimCodeSend(c, channel, contact, now)).send;
  const code = keep ? null : generateOtp();
  const handle = randomToken(32);
  const expiresAt = now + (challenge.signupVerification ? SIGNUP_VERIFICATION_TTL_SECONDS : MFA_SESSION_TTL_SECONDS);
  const write = (): Promise<void> => c.store.transaction(async (tx) => {
    await tx.sessions.create({
      id: randomUUID(), handleHash: sha256Hex(handle), userId, purpose, channel, contact, user,
      loginMethod: decoy ? DECOY_LOGIN_METHOD : challenge.loginMethod, roles: [...challenge.roles], scope: [...challenge.scope],
      state: challenge.state, authTime: challenge.authTime || now, expiresAt, createdAt: now,
    });
    if (code === null) return;
    // a decoy's digest is of a random 256-bit value, never of a code: no input can match it
    const digest = decoy ? sha256Hex(randomToken(32)) : otpDigest(c.otpKey, userId, channel, code);
    await tx.otps.put({ userId, channel, digest, expiresAt: now + ttl, sentAt: now });
    if (!decoy) queueOtp(tx, c.jobKey, channel, contact, code, user);
  });
  if (code === null) await write();
  else await writeClaimedSend(c, channel, contact, write);
  return { handle, expiresAt, armedAt: now, codeSent: code !== null && !decoy };
}
