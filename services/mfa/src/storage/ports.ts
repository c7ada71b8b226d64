/**
 * @module @gatehouse/mfa/storage
 * What the mfa service stores (ARCHITECTURE §2: MFA sessions, OTPs) and the unit of work its flows
 * run in. One implementation, on MikroORM through libs/db (storage/mikro).
 */
import type { AttemptLog } from '@gatehouse/auth';
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
  otps: {
    /** replaces the user's code on that channel */
    put(o: OtpRecord): Promise<void>;
    delete(userId: string, channel: OtpChannel): Promise<void>;
  };
  /** writes an envelope to `mfa_outbox` in this transaction (ARCHITECTURE §4) */
  events: { emit(name: string, data: unknown): void };
  /** passkeys (behaviour.md §4.6) */
  passkeys: PasskeyWrites;
  /** WebAuthn ceremony challenges (behaviour.md §4.6) */
  webauthnChallenges: WebauthnChallengeWrites;
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
  /**
   * OTP/TOTP verification attempts per user (behaviour.md §4.4 lockout), claimed before the code is
   * compared (`mfa_attempt_slots`); mfa's send caps claim on the same log
   */
  failures: AttemptLog;
  /** passkeys (behaviour.md §4.6) */
  passkeys: PasskeyReads;
  transaction<T>(fn: (tx: MfaTransaction) => Promise<T>): Promise<T>;
}

// --- passkeys (issue 16 point 4, behaviour.md §4.6) ---

/** A registered passkey: a WebAuthn discoverable credential of one user. Times are Unix seconds. */
export interface PasskeyRecord {
  /** the public id (UUIDv4) clients list and delete by */
  id: string;
  userId: string;
  /** the WebAuthn credential id, base64url; unique across users */
  credentialId: string;
  /** the COSE public key, base64url */
  publicKey: string;
  /** the authenticator's signature counter at its last use; 0 for authenticators that keep none */
  signCount: number;
  /** `usb`, `nfc`, `ble`, `internal`, `hybrid`, ... as the browser reported them */
  transports: string[];
  /** at most 64 characters, default `Passkey` */
  name: string;
  /** the authenticator model's AAGUID (all zeros with attestation `none` on many authenticators) */
  aaguid: string;
  /** `multiDevice` (synced, backup eligible) or `singleDevice` */
  deviceType: string;
  backedUp: boolean;
  createdAt: number;
  updatedAt: number;
  lastUsedAt: number | null;
}

/** What a challenge was issued for. */
export type WebauthnCeremony = 'registration' | 'login';

/**
 * A WebAuthn challenge (behaviour.md §4.6): 32 random bytes, single use, 300 s. A registration
 * challenge is bound to its user; a login challenge to its ceremony (the challenge itself) and, when
 * issued for an MFA session, to that session.
 */
export interface WebauthnChallengeRecord {
  /** base64url of the 32 bytes, as it appears in the client data */
  challenge: string;
  ceremony: WebauthnCeremony;
  /** registration: the user registering; login with an MFA session: the session's user */
  userId: string | null;
  /** the MFA session the ceremony runs in, when it runs in one */
  mfaSessionId: string | null;
  expiresAt: number;
  createdAt: number;
}

export interface PasskeyReads {
  /** the user's passkeys, oldest first */
  listByUser(userId: string): Promise<PasskeyRecord[]>;
  findByCredentialId(credentialId: string): Promise<PasskeyRecord | null>;
}

export interface PasskeyWrites {
  /** the user's passkeys as of this transaction, oldest first */
  listByUser(userId: string): Promise<PasskeyRecord[]>;
  /** @throws when the credential id is already registered (unique index) */
  create(p: PasskeyRecord): Promise<void>;
  /**
   * Records a use: the new sign count and `lastUsedAt`, only while the stored count is still
   * `expectedSignCount` (two assertions racing with one counter value: one wins).
   * @returns false when the passkey is gone or its count moved meanwhile
   */
  recordUse(id: string, expectedSignCount: number, signCount: number, at: number): Promise<boolean>;
  /** deletes one passkey of the user; false when the user has no passkey with that id */
  delete(userId: string, id: string): Promise<boolean>;
  /** deletes every passkey of the user (admin `reset_mfa`, behaviour.md §4.7); returns how many */
  deleteAllOfUser(userId: string): Promise<number>;
}

export interface WebauthnChallengeWrites {
  /** stores a challenge; expired ones may be pruned on the way */
  create(c: WebauthnChallengeRecord): Promise<void>;
  /**
   * Takes a challenge: returns it and deletes it, so it can be used once (of two concurrent takes
   * only one gets it). Returns it even when expired: the caller tells `expired` from `unknown`.
   */
  take(challenge: string): Promise<WebauthnChallengeRecord | null>;
}
