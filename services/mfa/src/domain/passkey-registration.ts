/**
 * @module @gatehouse/mfa/domain/passkey-registration
 * The passkey registration ceremony (behaviour.md §4.3 webauthn_registration_options / _verify,
 * §4.6) with @simplewebauthn/server. Two registrants: a signed-in user (user path), or the user of an
 * MFA session in the offer/enrol state (MFA-session path, which completes the gate). mfa stores the
 * passkey and answers a verdict; authn, which asked, answers the caller and issues tokens.
 */
import { randomUUID } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { webauthn } from './webauthn-lib.ts';
import { AppError } from '@gatehouse/errors';
import type { MfaSessionRecord, PasskeyRecord } from '../storage/ports.ts';
import type { ArmedSession, MfaContext } from './deps.ts';
import { isSetupState } from './enrol.ts';
import { INVALID_SESSION, MFA_SESSION_TTL_SECONDS } from './mfa-session.ts';
import {
  DEFAULT_PASSKEY_NAME, issueChallenge, MAX_PASSKEY_NAME_CHARS, MAX_PASSKEYS_PER_USER, parseCredential,
  PASSKEY_ALGORITHMS, PASSKEY_LIMIT_REACHED, PASSKEY_MFA_UNAVAILABLE, relyingParty, userHandleOf, WEBAUTHN_TIMEOUT_MS, type Auditor,
} from './passkeys.ts';

/** behaviour.md §4.3 */
export const INVALID_REGISTRATION = 'invalid passkey registration';
export const CHALLENGE_EXPIRED = 'passkey challenge expired';
export const CANNOT_SET_UP_PASSKEY = 'cannot set up a passkey in the current state';

/** Who registers: a signed-in user, or the user of an MFA session. */
export type Registrant =
  | { kind: 'user'; userId: string; /** the account name the authenticator shows (email, else the id) */ userName: string }
  | { kind: 'mfa'; session: MfaSessionRecord };

const userIdOf = (r: Registrant): string => (r.kind === 'user' ? r.userId : r.session.userId);
const userNameOf = (r: Registrant): string =>
  r.kind === 'user' ? r.userName : String(r.session.user.email ?? r.session.user.phone_number ?? r.session.userId);

/** Creation options as a JSON string, and the re-armed MFA session on the MFA-session path. */
export interface RegistrationOptions {
  options: string;
  armed: ArmedSession | null;
}

/**
 * `webauthn_registration_options` (behaviour.md §4.3, §4.6): creation options with a fresh challenge
 * bound to the user (and to the MFA session on that path, which is re-armed, §4.2).
 * @param handle the `mfa` cookie's value on the MFA-session path, to re-arm
 * @throws AppError `failed_precondition` `passkey MFA is not available on this server` (MFA-session
 *   path with passkey MFA not usable); `failed_precondition` `passkey limit reached; delete one
 *   before adding another` (10 passkeys already)
 */
export async function registrationOptions(c: MfaContext, registrant: Registrant, handle?: string): Promise<RegistrationOptions> {
  if (registrant.kind === 'mfa' && !c.methods.webauthn) throw new AppError('failed_precondition', PASSKEY_MFA_UNAVAILABLE);
  const userId = userIdOf(registrant);
  const existing = await c.store.passkeys.listByUser(userId);
  if (existing.length >= MAX_PASSKEYS_PER_USER) throw new AppError('failed_precondition', PASSKEY_LIMIT_REACHED);
  const now = c.now();
  const session = registrant.kind === 'mfa' ? registrant.session : null;
  const challenge = await c.store.transaction(async (tx) => {
    if (session) await tx.sessions.rearm(session.id, now + MFA_SESSION_TTL_SECONDS);
    return issueChallenge(c, tx, 'registration', { userId, mfaSessionId: session?.id ?? null });
  });
  const rp = relyingParty(c.options);
  const userName = userNameOf(registrant);
  const options = await (await webauthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName,
    userDisplayName: userName,
    userID: userHandleOf(userId),
    challenge: new Uint8Array(Buffer.from(challenge.challenge, 'base64url')),
    timeout: WEBAUTHN_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
  const armed = session && handle ? { handle, expiresAt: now + MFA_SESSION_TTL_SECONDS, armedAt: now } : null;
  return { options: JSON.stringify(options), armed };
}

/** A registration to verify. */
export interface RegistrationAttempt {
  credential: string | null | undefined;
  name: string | null | undefined;
}

/** A stored passkey, and on the MFA-session path the completed session (its grant, §4.1). */
export interface RegistrationVerdict {
  passkey: PasskeyRecord;
  completedSession: MfaSessionRecord | null;
}

/**
 * The name to store: trimmed, `Passkey` when absent or empty, at most 64 characters (§4.6).
 * @throws AppError `invalid_argument` `name must be at most 64 characters`
 */
export function passkeyName(name: string | null | undefined): string {
  const trimmed = (name ?? '').trim();
  if ([...trimmed].length > MAX_PASSKEY_NAME_CHARS) throw new AppError('invalid_argument', `name must be at most ${MAX_PASSKEY_NAME_CHARS} characters`);
  return trimmed || DEFAULT_PASSKEY_NAME;
}

/**
 * `webauthn_registration_verify` (behaviour.md §4.3, §4.6): verifies the attestation against the
 * challenge it names (taken, so used once whatever the outcome), stores the passkey and records
 * `user.webauthn_credential_added`; on the MFA-session path also completes (deletes) the session,
 * all in one transaction.
 * @throws AppError `invalid_argument` `name must be at most 64 characters`; `failed_precondition`
 *   `cannot set up a passkey in the current state` (an MFA session not in the offer/enrol state);
 *   `invalid_argument` `invalid passkey registration` (malformed, over 64 KiB, unknown or foreign
 *   challenge, failed verification, already registered); `invalid_argument` `passkey challenge
 *   expired`; `failed_precondition` `passkey limit reached; ...`; `unauthenticated` `invalid session`
 *   (the MFA session was completed meanwhile)
 */
export async function verifyRegistration(c: MfaContext, registrant: Registrant, attempt: RegistrationAttempt, audit: Auditor): Promise<RegistrationVerdict> {
  const name = passkeyName(attempt.name);
  const session = registrant.kind === 'mfa' ? registrant.session : null;
  // only in the offer/enrol state (G5, G7), with passkey MFA usable
  if (session && (!c.methods.webauthn || !(await isSetupState(c, session)))) throw new AppError('failed_precondition', CANNOT_SET_UP_PASSKEY);
  const parsed = parseCredential<RegistrationResponseJSON>(attempt.credential, INVALID_REGISTRATION);
  const userId = userIdOf(registrant);
  // taken in a transaction of its own: a failed attempt uses the challenge up too
  const challenge = await c.store.transaction((tx) => tx.webauthnChallenges.take(parsed.challenge));
  const now = c.now();
  if (!challenge || challenge.ceremony !== 'registration' || challenge.userId !== userId || challenge.mfaSessionId !== (session?.id ?? null)) {
    throw new AppError('invalid_argument', INVALID_REGISTRATION);
  }
  if (challenge.expiresAt <= now) throw new AppError('invalid_argument', CHALLENGE_EXPIRED);
  const rp = relyingParty(c.options);
  let info;
  try {
    const result = await (await webauthn()).verifyRegistrationResponse({
      response: parsed.json, expectedChallenge: challenge.challenge, expectedOrigin: rp.origins, expectedRPID: rp.id,
      requireUserVerification: true, supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    });
    if (!result.verified) throw new Error('not verified');
    info = result.registrationInfo;
  } catch (err) {
    c.logger.info({ err, userId }, 'passkey registration refused');
    throw new AppError('invalid_argument', INVALID_REGISTRATION);
  }
  if (await c.store.passkeys.findByCredentialId(info.credential.id)) throw new AppError('invalid_argument', INVALID_REGISTRATION);
  const passkey: PasskeyRecord = {
    id: randomUUID(), userId, credentialId: info.credential.id, publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    signCount: info.credential.counter, transports: info.credential.transports ?? [], name, aaguid: info.aaguid,
    deviceType: info.credentialDeviceType, backedUp: info.credentialBackedUp, createdAt: now, updatedAt: now, lastUsedAt: null,
  };
  await c.store.transaction(async (tx) => {
    if ((await tx.passkeys.listByUser(userId)).length >= MAX_PASSKEYS_PER_USER) throw new AppError('failed_precondition', PASSKEY_LIMIT_REACHED);
    if (session && !(await tx.sessions.delete(session.id))) throw new AppError('unauthenticated', INVALID_SESSION);
    await tx.passkeys.create(passkey);
    tx.events.emit('audit.recorded', audit('user.webauthn_credential_added', {
      actor: { type: 'user', id: userId }, resourceType: 'user', resourceId: userId, details: { passkey_id: passkey.id, name }, at: now,
    }));
  });
  return { passkey, completedSession: session };
}
