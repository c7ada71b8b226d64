/**
 * @module @gatehouse/mfa/storage
 * What the mfa service stores (ARCHITECTURE §2: MFA sessions, OTPs) and the unit of work its flows
 * run in. One implementation, on MikroORM through libs/db (storage/mikro).
 */
import type { FailureLog } from '@gatehouse/auth';
import type { common } from '@gatehouse/contracts';

/** `login`, or `password_reset` for the phone leg of forgot_password (behaviour.md §4.2). */
export type MfaPurpose = 'login' | 'password_reset';
/** The channel a session's code goes to; null for sessions without one (TOTP, passkeys). */
export type OtpChannel = 'email' | 'sms';

/** An MFA session (behaviour.md §4.2). Times are Unix seconds. */
export interface MfaSessionRecord {
  id: string;
  /** SHA-256 hex of the `mfa` cookie's opaque handle; the handle itself is never stored */
  handleHash: string;
  userId: string;
  purpose: MfaPurpose;
  channel: OtpChannel | null;
  /** the address the code goes to (email or phone number) */
  contact: string | null;
  /** the User record (wire shape) the challenge was opened for, for `{{.user.*}}` in a resent email */
  user: common.User;
  /** applied when tokens are finally issued; never re-read from the completion request (§4.1) */
  loginMethod: string;
  roles: string[];
  scope: string[];
  state: string | null;
  authTime: number;
  expiresAt: number;
  createdAt: number;
}

/** The one live code of a user on a channel (behaviour.md §4.4). */
export interface OtpRecord {
  userId: string;
  channel: OtpChannel;
  /** HMAC-SHA-256 hex, see domain/otp */
  digest: string;
  expiresAt: number;
  sentAt: number;
}

/** Writes of one transaction; they commit together with the events emitted through `events`. */
export interface MfaTransaction {
  sessions: {
    create(s: MfaSessionRecord): Promise<void>;
    /** sets a new expiry (re-arm) */
    rearm(id: string, expiresAt: number): Promise<void>;
    /** deletes the session; false when it was already gone (another completion won) */
    delete(id: string): Promise<boolean>;
  };
  otps: {
    /** replaces the user's code on that channel */
    put(o: OtpRecord): Promise<void>;
    delete(userId: string, channel: OtpChannel): Promise<void>;
  };
  /** writes an envelope to `mfa_outbox` in this transaction (ARCHITECTURE §4) */
  events: { emit(name: string, data: unknown): void };
}


export interface MfaStore {
  findSessionByHandleHash(handleHash: string): Promise<MfaSessionRecord | null>;
  findOtp(userId: string, channel: OtpChannel): Promise<OtpRecord | null>;
  /** OTP verification failures per user (behaviour.md §4.4 lockout) */
  failures: FailureLog;
  transaction<T>(fn: (tx: MfaTransaction) => Promise<T>): Promise<T>;
}
