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

/**
 * A TOTP enrolment (behaviour.md §4.5). `active` is the verified secret; `pending` is one awaiting its
 * first code (a first enrolment, or a re-enrolment staged for 600 s while the active one keeps working).
 */
export type TotpSlot = 'active' | 'pending';

export interface TotpRecord {
  userId: string;
  slot: TotpSlot;
  /** AES-256-GCM sealed base32 secret (libs/crypto `encrypt`, aad `totp:<user id>`) */
  secretSealed: string;
  /** the last accepted time step (replay guard); null before the first code */
  lastStep: number | null;
  /** Unix seconds; null for `active` */
  expiresAt: number | null;
  createdAt: number;
}

/** One recovery code of a TOTP enrolment: only its SHA-256 is stored; `slot` follows its TOTP. */
export interface RecoveryCodeRecord {
  id: string;
  userId: string;
  slot: TotpSlot;
  /** SHA-256 hex of the lower-case UUID */
  codeHash: string;
  usedAt: number | null;
  createdAt: number;
}

/** An email/SMS OTP enrolment (behaviour.md §4.3 `*_otp_mfa_setup`); verified once verify_otp proves a code. */
export interface OtpEnrolmentRecord {
  userId: string;
  channel: OtpChannel;
  verifiedAt: number | null;
  createdAt: number;
}

/** The verified factors of a user as stored (whether each method is usable is the domain's call). */
export interface StoredFactors {
  totp: boolean;
  emailOtp: boolean;
  smsOtp: boolean;
  passkeys: number;
}

/**
 * Passkeys as the gate sees them (behaviour.md §4.1 G4, §4.7). PLUG-IN POINT for the passkeys work
 * (branch h/passkeys): the credentials table and its store are theirs; they implement this port on
 * it and hand it to the mfa store (`createMikroMfaStore(db, clock, passkeys)`, `createMemoryMfaStore({passkeys})`).
 * Until then {@link NO_PASSKEYS} answers: no user has a passkey.
 */
export interface PasskeyLookup {
  /** how many passkeys the user has registered */
  countByUser(userId: string): Promise<number>;
}

/**
 * Deleting a user's passkeys inside an mfa transaction (behaviour.md §4.7 reset). The passkeys work
 * implements it on its table with the same `em` (or draft, in memory); {@link NO_PASSKEYS} deletes nothing.
 */
export interface PasskeyEraser {
  /** @returns how many were deleted */
  deleteAllOfUser(userId: string): Promise<number>;
}

/** No passkey store yet: nobody has a passkey, and there is nothing to delete. */
export const NO_PASSKEYS: PasskeyLookup & PasskeyEraser = Object.freeze({
  async countByUser() { return 0; },
  async deleteAllOfUser() { return 0; },
});

/** Writes of one transaction; they commit together with the events emitted through `events`. */
export interface MfaTransaction {
  sessions: {
    create(s: MfaSessionRecord): Promise<void>;
    /** sets a new expiry (re-arm) */
    rearm(id: string, expiresAt: number): Promise<void>;
    /** deletes the session; false when it was already gone (another completion won) */
    delete(id: string): Promise<boolean>;
    /** points the session at a channel (an OTP enrolment's code) and re-arms it */
    setChannel(id: string, channel: OtpChannel, contact: string, expiresAt: number): Promise<void>;
    /** deletes every MFA session of the user (reset, lock) */
    deleteAllOfUser(userId: string): Promise<number>;
  };
  totp: {
    /** creates or replaces the user's enrolment in that slot */
    put(t: TotpRecord): Promise<void>;
    delete(userId: string, slot: TotpSlot): Promise<number>;
    /**
     * Records `step` as accepted, only if it is after the stored last step (the replay guard, atomic):
     * false when another request accepted this or a later step first.
     */
    advanceStep(userId: string, slot: TotpSlot, step: number): Promise<boolean>;
    /** makes the pending enrolment the active one (replacing it) with `lastStep` */
    promote(userId: string, lastStep: number): Promise<void>;
  };
  recoveryCodes: {
    /** replaces the user's codes in that slot */
    replace(userId: string, slot: TotpSlot, codes: RecoveryCodeRecord[]): Promise<void>;
    /** marks an unused code used; false when it was used already (single use, atomic) */
    use(id: string, at: number): Promise<boolean>;
    /** the pending set replaces the active one */
    promote(userId: string): Promise<void>;
    deleteAllOfUser(userId: string): Promise<number>;
  };
  otpEnrolments: {
    put(e: OtpEnrolmentRecord): Promise<void>;
    /** sets `verifiedAt` on an unverified enrolment; false when there is none */
    verify(userId: string, channel: OtpChannel, at: number): Promise<boolean>;
    deleteAllOfUser(userId: string): Promise<number>;
  };
  /** the passkeys work plugs in here (see {@link PasskeyEraser}) */
  passkeys: PasskeyEraser;
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
  findTotp(userId: string, slot: TotpSlot): Promise<TotpRecord | null>;
  /** the unused or used code of that hash in the user's active set, or null */
  findRecoveryCode(userId: string, codeHash: string): Promise<RecoveryCodeRecord | null>;
  findOtpEnrolment(userId: string, channel: OtpChannel): Promise<OtpEnrolmentRecord | null>;
  /** what is verified for each user (behaviour.md §4.1 "verified factor") */
  storedFactors(userIds: readonly string[]): Promise<Map<string, StoredFactors>>;
  findOtp(userId: string, channel: OtpChannel): Promise<OtpRecord | null>;
  /** OTP verification failures per user (behaviour.md §4.4 lockout) */
  failures: FailureLog;
  transaction<T>(fn: (tx: MfaTransaction) => Promise<T>): Promise<T>;
}
