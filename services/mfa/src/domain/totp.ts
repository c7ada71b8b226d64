/**
 * @module @gatehouse/mfa/domain/totp
 * TOTP and recovery codes (behaviour.md §4.5): RFC 6238 through otplib (HMAC-SHA-1, 6 digits, 30 s,
 * T0 = 0), a 20-byte secret returned once as unpadded base32 and kept AES-256-GCM sealed under
 * `--encryption-key`; the `otpauth://` URI and its 200×200 PNG QR (the `qrcode` package); ±1 step with
 * the replay guard; 10 UUIDv4 recovery codes kept as SHA-256 hashes.
 */
import { randomUUID } from 'node:crypto';
import { generateSecret, verify } from 'otplib';
import { decrypt, encrypt, hmacSha256Hex, keyRing, sha256Hex, type KeyRing } from '@gatehouse/crypto';
import type { common } from '@gatehouse/contracts';
import type { RecoveryCodeRecord, TotpRecord, TotpSlot } from '../storage/ports.ts';

/** behaviour.md §4.5 */
export const TOTP_SECRET_BYTES = 20;
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const RECOVERY_CODE_COUNT = 10;
/** A staged or first enrolment awaits its first code this long, seconds (behaviour.md §4.5 re-enrolment). */
export const TOTP_PENDING_TTL_SECONDS = 600;
export const QR_SIZE_PX = 200;

/**
 * The AES-256 keys TOTP secrets are sealed with: the ring of `--encryption-key` (issue 32: the first
 * seals, all open), or (when it is not set) a key derived from `--client-secret`, which every process
 * of a deployment shares.
 */
export function totpSealKey(encryptionKey: string | undefined, clientSecret: string): KeyRing {
  return keyRing(encryptionKey, () => hmacSha256Hex(clientSecret, 'gatehouse/totp/v1'));
}

/** the associated data binding a sealed secret to its user (a row copied to another user fails to open) */
export const totpAad = (userId: string): string => `totp:${userId}`;
const aadOf = totpAad;

/** A new enrolment: the secret in clear (returned once), its sealed record and the recovery codes. */
export interface NewTotpEnrolment {
  /** unpadded base32, 32 characters */
  secret: string;
  record: TotpRecord;
  /** the codes in clear (returned once) */
  recoveryCodes: string[];
  recoveryRecords: RecoveryCodeRecord[];
}

/**
 * Draws a new secret and recovery codes for `slot`.
 * @param now Unix seconds; a `pending` record expires {@link TOTP_PENDING_TTL_SECONDS} later
 */
export function newTotpEnrolment(key: KeyRing, userId: string, slot: TotpSlot, now: number): NewTotpEnrolment {
  const secret = generateSecret({ length: TOTP_SECRET_BYTES });
  const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, () => randomUUID());
  return {
    secret,
    record: {
      userId, slot, secretSealed: encrypt(key, secret, aadOf(userId)), lastStep: null,
      expiresAt: slot === 'pending' ? now + TOTP_PENDING_TTL_SECONDS : null, createdAt: now,
    },
    recoveryCodes,
    recoveryRecords: recoveryCodes.map((code) => ({ id: randomUUID(), userId, slot, codeHash: recoveryCodeHash(code), usedAt: null, createdAt: now })),
  };
}

/** SHA-256 hex of a recovery code, trimmed and lower-cased (UUIDs are compared case-insensitively). */
export const recoveryCodeHash = (code: string): string => sha256Hex(code.trim().toLowerCase());

/** A recovery code's shape: a UUID (any case). */
export const looksLikeRecoveryCode = (input: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(input.trim());

/**
 * The time step a 6-digit code matches for the sealed secret within ±1 step of `now`, after the
 * record's last accepted step (the replay guard); null when it matches none.
 */
export async function matchingStep(key: KeyRing, record: TotpRecord, code: string, now: number): Promise<number | null> {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const secret = decrypt(key, record.secretSealed, aadOf(record.userId));
  const result = await verify({
    secret, token: code, epoch: now, period: TOTP_PERIOD_SECONDS, digits: TOTP_DIGITS, algorithm: 'sha1',
    epochTolerance: TOTP_PERIOD_SECONDS,
    ...(record.lastStep !== null ? { afterTimeStep: record.lastStep } : {}),
  });
  if (!result.valid) return null;
  // TOTP results carry the RFC 6238 time step T (otplib's union type is shared with HOTP's)
  return (result as { timeStep: number }).timeStep;
}

/**
 * `otpauth://totp/<issuer>:<account>?secret=…&issuer=<issuer>&algorithm=SHA1&digits=6&period=30`
 * (behaviour.md §4.5): the account is the email, else the phone, else the user id.
 */
export function otpauthUri(issuer: string, user: Pick<common.User, 'id' | 'email' | 'phone_number'>, secret: string): string {
  const account = user.email || user.phone_number || user.id;
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}`;
}

/** The URI as a 200×200 PNG in standard base64, without a `data:` prefix (behaviour.md §4.5). */
export async function qrPngBase64(uri: string): Promise<string> {
  // qrcode (with pngjs) loads with the first enrolment, not at start-up (issue 22 §3)
  const { default: QRCode } = await import('qrcode');
  const png = await QRCode.toBuffer(uri, { type: 'png', width: QR_SIZE_PX, margin: 2, errorCorrectionLevel: 'M' });
  return png.toString('base64');
}
