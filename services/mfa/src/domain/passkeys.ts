/**
 * @module @gatehouse/mfa/domain/passkeys
 * What both WebAuthn ceremonies share (behaviour.md §4.6): the relying party (RP ID and name from
 * `--url` and `--organization-name`, the accepted origins), the limits, the parsing of a `credential`
 * JSON string, challenges, and the list and delete of a user's own passkeys (§4.3).
 */
import { randomBytes } from 'node:crypto';
import type { AuditDetails } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import type { MfaTransaction, PasskeyRecord, WebauthnCeremony, WebauthnChallengeRecord } from '../storage/ports.ts';
import type { MfaContext } from './deps.ts';
import type { MfaOptions } from './options.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** behaviour.md §4.6 / §10 */
export const MAX_PASSKEYS_PER_USER = 10;
export const MAX_PASSKEY_NAME_CHARS = 64;
export const DEFAULT_PASSKEY_NAME = 'Passkey';
/** `options` and `credential` JSON, bytes (UTF-8) */
export const MAX_PASSKEY_JSON_BYTES = 64 * 1024;
/** challenge lifetime, seconds; the ceremony timeout is the same in ms */
export const WEBAUTHN_CHALLENGE_TTL_SECONDS = 300;
export const WEBAUTHN_TIMEOUT_MS = WEBAUTHN_CHALLENGE_TTL_SECONDS * 1000;
/** COSE algorithms offered and accepted, in preference order: ES256, EdDSA, RS256 (§4.6) */
export const PASSKEY_ALGORITHMS = [-7, -8, -257];

export const PASSKEY_LIMIT_REACHED = 'passkey limit reached; delete one before adding another';
export const PASSKEY_NOT_FOUND = 'passkey not found';
export const PASSKEY_DELETED = 'Passkey deleted successfully.';
export const PASSKEY_MFA_UNAVAILABLE = 'passkey MFA is not available on this server';

/**
 * Builds the `audit.recorded` event of one action (libs/auth `auditRecord` bound to the call); the
 * domain emits it through the outbox in the transaction of the change (behaviour.md §5.7).
 */
export type Auditor = (action: string, details: AuditDetails) => unknown;

/** The relying party of this deployment (behaviour.md §4.6). */
export interface RelyingParty {
  /** the host name of `--url` */
  id: string;
  /** `--organization-name` */
  name: string;
  /** the `--url` origin, then every `--allowed-origins` origin whose host is the RP ID or a subdomain of it */
  origins: string[];
}

/**
 * The relying party from the flags. `--allowed-origins` entries with a wildcard host (`*.example.com`)
 * or `*` name no single origin and are not accepted as passkey origins.
 */
export function relyingParty(o: MfaOptions): RelyingParty {
  const url = new URL(o.url);
  const id = url.hostname;
  const origins = [url.origin];
  for (const entry of o.allowedOrigins ?? []) {
    if (entry.includes('*')) continue;
    let origin: URL;
    try {
      origin = new URL(entry);
    } catch {
      continue;
    }
    const host = origin.hostname;
    if ((host === id || host.endsWith(`.${id}`)) && !origins.includes(origin.origin)) origins.push(origin.origin);
  }
  return { id, name: o.organizationName || 'Gatehouse', origins };
}

/** The WebAuthn user handle of a user: the UTF-8 bytes of the user id (behaviour.md §4.6). */
export const userHandleOf = (userId: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(userId, 'utf8'));

/** A parsed `credential` (PublicKeyCredential.toJSON() form) and the challenge its client data names. */
export interface ParsedCredential<T> {
  json: T;
  /** credential id, base64url */
  id: string;
  /** the challenge in `response.clientDataJSON`, base64url */
  challenge: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses a `credential` string: at most 64 KiB, JSON, a `public-key` credential with an `id` and a
 * `response.clientDataJSON` whose `challenge` is a string.
 * @param invalid the message of the AppError thrown on any defect
 * @throws AppError `invalid_argument` `invalid` when the credential is absent, too large, not JSON or not a credential
 */
export function parseCredential<T>(credential: string | null | undefined, invalid: string): ParsedCredential<T> {
  const text = credential ?? '';
  if (!text || Buffer.byteLength(text, 'utf8') > MAX_PASSKEY_JSON_BYTES) throw new AppError('invalid_argument', invalid);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError('invalid_argument', invalid);
  }
  if (!isRecord(json) || json.type !== 'public-key' || typeof json.id !== 'string' || !json.id || typeof json.rawId !== 'string') {
    throw new AppError('invalid_argument', invalid);
  }
  const response = json.response;
  if (!isRecord(response) || typeof response.clientDataJSON !== 'string') throw new AppError('invalid_argument', invalid);
  let clientData: unknown;
  try {
    clientData = JSON.parse(Buffer.from(response.clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    throw new AppError('invalid_argument', invalid);
  }
  if (!isRecord(clientData) || typeof clientData.challenge !== 'string' || !clientData.challenge) throw new AppError('invalid_argument', invalid);
  return { json: json as T, id: json.id, challenge: clientData.challenge };
}

/**
 * Creates and stores a challenge: 32 random bytes, 300 s, single use (behaviour.md §4.6).
 * @returns the challenge, base64url
 */
export async function issueChallenge(
  c: MfaContext, tx: MfaTransaction, ceremony: WebauthnCeremony, binding: { userId: string | null; mfaSessionId: string | null },
): Promise<WebauthnChallengeRecord> {
  const now = c.now();
  const record: WebauthnChallengeRecord = {
    challenge: randomBytes(32).toString('base64url'), ceremony, ...binding, expiresAt: now + WEBAUTHN_CHALLENGE_TTL_SECONDS, createdAt: now,
  };
  await tx.webauthnChallenges.create(record);
  return record;
}

/** A passkey as `webauthn_credentials` lists it (behaviour.md §4.3). Times are Unix seconds. */
export interface PasskeyInfo {
  id: string;
  name: string;
  transports: string[];
  createdAt: number;
  updatedAt: number;
  lastUsedAt: number | null;
}

const infoOf = (p: PasskeyRecord): PasskeyInfo => ({
  id: p.id, name: p.name, transports: p.transports, createdAt: p.createdAt, updatedAt: p.updatedAt, lastUsedAt: p.lastUsedAt,
});

/** The user's passkeys, oldest first (behaviour.md §4.3 `webauthn_credentials`). */
export async function listPasskeys(c: MfaContext, userId: string): Promise<PasskeyInfo[]> {
  return (await c.store.passkeys.listByUser(userId)).map(infoOf);
}

/**
 * Deletes one of the user's own passkeys and records `user.webauthn_credential_deleted` with it
 * (behaviour.md §4.3, §5.7).
 * @throws AppError `invalid_argument` `id is required`; `not_found` `passkey not found` when the user has no passkey with that id
 */
export async function deletePasskey(c: MfaContext, userId: string, id: string | null | undefined, audit: Auditor): Promise<void> {
  const passkeyId = (id ?? '').trim().toLowerCase();
  if (!passkeyId) throw new AppError('invalid_argument', 'id is required');
  // ids are UUIDs: anything else names no passkey (and never reaches a uuid column)
  if (!UUID.test(passkeyId)) throw new AppError('not_found', PASSKEY_NOT_FOUND);
  await c.store.transaction(async (tx) => {
    if (!(await tx.passkeys.delete(userId, passkeyId))) throw new AppError('not_found', PASSKEY_NOT_FOUND);
    tx.events.emit('audit.recorded', audit('user.webauthn_credential_deleted', {
      actor: { type: 'user', id: userId }, resourceType: 'user', resourceId: userId, details: { passkey_id: passkeyId }, at: c.now(),
    }));
  });
}
