/**
 * @module @gatehouse/mfa/domain/passkey-login
 * The passkey login ceremony (behaviour.md §4.3 webauthn_login_options / _verify, §4.6) with
 * @simplewebauthn/server: usernameless (a discoverable credential, empty allowCredentials), or for the
 * user of an MFA session (passkey as the second factor, which completes the session). mfa answers a
 * verdict; authn issues the tokens (§4.1 "no gate": a user-verifying passkey is multi-factor).
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { webauthn } from './webauthn-lib.ts';
import { sha256Hex } from '@gatehouse/crypto';
import { AppError } from '@gatehouse/errors';
import type { MfaSessionRecord } from '../storage/ports.ts';
import type { MfaContext } from './deps.ts';
import { requireMfaSession } from './mfa-session.ts';
import { issueChallenge, parseCredential, PASSKEY_MFA_UNAVAILABLE, relyingParty, userHandleOf, WEBAUTHN_TIMEOUT_MS } from './passkeys.ts';

/** behaviour.md §4.3 */
export const INVALID_PASSKEY = 'invalid passkey';
export const NO_PASSKEY_FOR_ACCOUNT = 'no passkey found for this account';

/**
 * `webauthn_login_options` (behaviour.md §4.3, §4.6). Without `email`: a usernameless ceremony, its
 * challenge bound to nothing but itself. With `email`: the caller's MFA session must be that
 * account's; the options list its passkeys and the challenge is bound to the session.
 * @param handle the `mfa` cookie's value
 * @returns the PublicKeyCredentialRequestOptions JSON string
 * @throws AppError `unauthenticated` `invalid session` (with `email`: no, expired or foreign session);
 *   `failed_precondition` `passkey MFA is not available on this server`; `not_found` `no passkey
 *   found for this account`
 */
export async function loginOptions(c: MfaContext, handle: string | undefined, email: string | null | undefined): Promise<string> {
  let session: MfaSessionRecord | null = null;
  let allow: { id: string; transports: string[] }[] = [];
  if (email?.trim()) {
    session = await requireMfaSession(c, handle, { email }, 'login');
    if (!c.methods.webauthn) throw new AppError('failed_precondition', PASSKEY_MFA_UNAVAILABLE);
    allow = (await c.store.passkeys.listByUser(session.userId)).map((p) => ({ id: p.credentialId, transports: p.transports }));
    if (allow.length === 0) throw new AppError('not_found', NO_PASSKEY_FOR_ACCOUNT);
  }
  const challenge = await c.store.transaction((tx) =>
    issueChallenge(c, tx, 'login', { userId: session?.userId ?? null, mfaSessionId: session?.id ?? null }));
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: relyingParty(c.options).id,
    allowCredentials: allow,
    challenge: new Uint8Array(Buffer.from(challenge.challenge, 'base64url')),
    timeout: WEBAUTHN_TIMEOUT_MS,
    userVerification: 'required',
  });
  return JSON.stringify(options);
}

/** A verified assertion: whose passkey, and the MFA session it completed, if any. */
export interface LoginVerdict {
  userId: string;
  passkeyId: string;
  userVerified: boolean;
  /** the MFA session the assertion completed (deleted); its grant is what tokens are issued with (§4.1) */
  completedSession: MfaSessionRecord | null;
}

/** The caller's live `login` MFA session, or null (a stale or foreign cookie does not block a passkey login). */
async function presentSession(c: MfaContext, handle: string | undefined): Promise<MfaSessionRecord | null> {
  if (!handle) return null;
  const s = await c.store.findSessionByHandleHash(sha256Hex(handle));
  return s && s.expiresAt > c.now() && s.purpose === 'login' ? s : null;
}

const refuse = (): AppError => new AppError('unauthenticated', INVALID_PASSKEY);

/**
 * `webauthn_login_verify` (behaviour.md §4.3, §4.6): verifies the assertion against the challenge it
 * names (taken: used once whatever the outcome), the stored public key and sign count (a non-zero
 * count must increase), with user verification required. When the caller holds an MFA session the
 * passkey must be its user's, and the session is completed in the transaction that records the use;
 * with passkey-as-MFA off (`--disable-webauthn-mfa`) such a call is refused before the challenge is taken.
 * @param handle the `mfa` cookie's value
 * @throws AppError `failed_precondition` `passkey MFA is not available on this server` (an MFA session is
 *   present and passkey-as-MFA is off); `invalid_argument` `invalid passkey` (malformed or over 64 KiB); `unauthenticated`
 *   `invalid passkey` (unknown, used, expired or foreign challenge, unknown credential, another
 *   user's passkey, bad signature, no user verification, sign-count regression, a racing use)
 */
export async function verifyLogin(c: MfaContext, handle: string | undefined, credential: string | null | undefined): Promise<LoginVerdict> {
  const parsed = parseCredential<AuthenticationResponseJSON>(credential, INVALID_PASSKEY);
  const session = await presentSession(c, handle);
  // a passkey completes an MFA session only while passkey-as-MFA is usable (behaviour.md §4.1 "Usable
  // method"): with --disable-webauthn-mfa the factor is neither offered nor accepted (issue 30 §4)
  if (session && !c.methods.webauthn) throw new AppError('failed_precondition', PASSKEY_MFA_UNAVAILABLE);
  const challenge = await c.store.transaction((tx) => tx.webauthnChallenges.take(parsed.challenge));
  const now = c.now();
  if (!challenge || challenge.ceremony !== 'login' || challenge.expiresAt <= now) throw refuse();
  if (challenge.mfaSessionId !== null && challenge.mfaSessionId !== session?.id) throw refuse();
  const passkey = await c.store.passkeys.findByCredentialId(parsed.id);
  if (!passkey) throw refuse();
  if ((challenge.userId !== null && challenge.userId !== passkey.userId) || (session && session.userId !== passkey.userId)) throw refuse();
  const userHandle = parsed.json.response?.userHandle;
  if (userHandle && userHandle !== Buffer.from(userHandleOf(passkey.userId)).toString('base64url')) throw refuse();
  const rp = relyingParty(c.options);
  let newCounter: number;
  let userVerified: boolean;
  try {
    const result = await (await webauthn()).verifyAuthenticationResponse({
      response: parsed.json, expectedChallenge: challenge.challenge, expectedOrigin: rp.origins, expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')), counter: passkey.signCount, transports: passkey.transports },
      requireUserVerification: true,
    });
    if (!result.verified) throw new Error('not verified');
    ({ newCounter, userVerified } = result.authenticationInfo);
  } catch (err) {
    // a sign count at or below the stored non-zero one lands here too (a cloned authenticator)
    c.logger.info({ err, passkeyId: passkey.id }, 'passkey assertion refused');
    throw refuse();
  }
  await c.store.transaction(async (tx) => {
    if (!(await tx.passkeys.recordUse(passkey.id, passkey.signCount, newCounter, now))) throw refuse();
    if (session && !(await tx.sessions.delete(session.id))) throw refuse();
  });
  return { userId: passkey.userId, passkeyId: passkey.id, userVerified, completedSession: session };
}
