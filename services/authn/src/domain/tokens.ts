/**
 * @module @gatehouse/authn/domain/tokens
 * Access, ID and refresh tokens (behaviour.md §2.1; OIDC Core 1.0 §2 for the ID token).
 */
import { randomUUID } from 'node:crypto';
import { atHash } from '@gatehouse/crypto';
import type { SessionRecord } from '@gatehouse/auth';
import type { UserRecord } from '../storage/ports.ts';
import type { AuthnContext } from './deps.ts';
import { publicUser } from './user.ts';

export interface IssuedTokens {
  accessToken: string;
  idToken: string;
  /** only when the scope contains `offline_access` */
  refreshToken: string | null;
  /** the refresh token's `jti`, to record as the session's current refresh token */
  refreshTokenId: string | null;
  /** seconds the access token lives (≥ 1) */
  expiresIn: number;
}

/** RFC 9068 §2.1: the JOSE `typ` of a JWT access token issued by the OAuth endpoints. */
export const AT_JWT_TYP = 'at+jwt';

/** What an OIDC authorization request adds to the ID token (OIDC Core §3.1.2.1). */
export interface OidcRequest {
  /**
   * The authorization request's `nonce`, echoed in the ID token; null for an OAuth grant whose request
   * sent none (the ID token then has no `nonce`); absent for first-party flows (the session id)
   */
  nonce?: string | null | undefined;
  /**
   * Issue the access token in the RFC 9068 profile (§2.1 header `typ: at+jwt`; §2.2 claims
   * `client_id` and a unique `jti` added): tokens of `/authorize` and `/oauth/token`. The first-party
   * `/v1` flows keep the plain `JWT` header and the project's claim set.
   */
  jwtAccessToken?: boolean;
  /** RFC 9449 §6.1: the DPoP key's RFC 7638 thumbprint; the access token gets `cnf: {jkt}` (a DPoP-bound token) */
  dpopJkt?: string | null;
  /** RFC 9449 §5: the thumbprint the refresh token is bound to (public clients), as `cnf: {jkt}` */
  refreshJkt?: string | null;
  /**
   * RFC 8707 §2 / RFC 9068 §3: the resources the access token is for, its `aud` instead of the client
   * (one: a string; several: an array); the refresh token keeps them as `resource`, so a refreshed
   * access token is for them too. Absent or []: `aud` is the client.
   */
  audience?: readonly string[];
  /** the refresh token's `resource` when it differs from `audience` (a refresh narrowed to one of the grant's resources) */
  refreshResource?: readonly string[];
}

/** RFC 8176 `amr` values by login method. */
export function amrFor(loginMethod: string): string[] {
  switch (loginMethod) {
    case 'basic_auth':
    case 'mobile_basic_auth':
      return ['pwd'];
    case 'magic_link_login':
    case 'mobile_otp':
      return ['otp'];
    case 'webauthn':
      // a user-verifying passkey: proof of possession of a key and of the user (biometric or PIN)
      return ['hwk', 'user'];
    default:
      return ['fed'];
  }
}

/** The user's non-null OIDC profile claims (OIDC Core §5.1). */
function profileClaims(u: UserRecord): Record<string, unknown> {
  const claims: Record<string, unknown> = {
    email: u.email,
    email_verified: u.email === null ? null : u.emailVerifiedAt !== null,
    given_name: u.givenName,
    family_name: u.familyName,
    middle_name: u.middleName,
    nickname: u.nickname,
    preferred_username: u.email,
    gender: u.gender,
    birthdate: u.birthdate,
    picture: u.picture,
    phone_number: u.phoneNumber,
    phone_number_verified: u.phoneNumber === null ? null : u.phoneNumberVerifiedAt !== null,
    updated_at: u.updatedAt,
  };
  return Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null));
}

/**
 * The ID token's `amr` (RFC 8176): the first step's values, then the second factor's (`otp`, `sms`,
 * `hwk`, `user`) and `mfa` once one was proven (behaviour.md §2.1; issue 16).
 */
export function amrOf(loginMethod: string, secondFactor: readonly string[] = []): string[] {
  const first = amrFor(loginMethod);
  if (secondFactor.length === 0) return first;
  return [...new Set([...first, ...secondFactor, 'mfa'])];
}

/**
 * Signs the token set for `session`. The access token's `nonce` is the session id, which is what
 * makes it valid only while the session exists; the ID token's `sid` is the sign-on session (the
 * browser session an OAuth grant was made in, `session.sid`, else the session itself). The session's `amr` (a second factor proven when it
 * was opened, behaviour.md §4.1) goes into the ID token's, also on refresh.
 */
export async function issueTokens(
  c: AuthnContext,
  user: UserRecord,
  session: Pick<SessionRecord, 'id' | 'roles' | 'scope' | 'loginMethod' | 'authTime' | 'amr' | 'clientId' | 'sid'>,
  oidc: OidcRequest = {},
): Promise<IssuedTokens> {
  const o = c.options;
  const now = c.now();
  // issue 18: tokens of an OAuth client carry it as `aud` and `client_id` (behaviour.md §2.1)
  const clientId = session.clientId ?? o.clientId;
  const common = {
    iss: o.url,
    aud: clientId,
    sub: user.id,
    nonce: session.id,
    roles: session.roles,
    allowed_roles: [...user.roles],
    login_method: session.loginMethod,
  };
  const audience = oidc.audience ?? [];
  const accessPayload = {
    // RFC 9068 §2.2.3: the OAuth endpoints' tokens carry `scope` as one space-delimited string; the
    // first-party /v1 tokens keep the array their clients read
    ...common, token_type: 'access_token', scope: oidc.jwtAccessToken ? session.scope.join(' ') : session.scope,
    ...(audience.length > 0 ? { aud: audience.length === 1 ? audience[0]! : [...audience] } : {}),
    // RFC 9068 §2.2: the client the token was issued to, and an identifier unique per token
    ...(oidc.jwtAccessToken ? { client_id: clientId, jti: randomUUID() } : {}),
    ...(oidc.dpopJkt ? { cnf: { jkt: oidc.dpopJkt } } : {}),
  };
  const custom = c.customClaims ? await c.customClaims(publicUser(user), accessPayload) : {};
  const accessToken = await c.jwt.sign({ ...custom, ...accessPayload }, {
    expiresInSeconds: o.accessTokenExpiresIn, nowSeconds: now, ...(oidc.jwtAccessToken ? { typ: AT_JWT_TYP } : {}),
  });
  const idClaims: Record<string, unknown> = {
    ...custom,
    ...profileClaims(user),
    iss: o.url,
    aud: clientId,
    sub: user.id,
    // OIDC Core §3.1.2.1 / §2: an OAuth grant's ID token carries its authorization request's nonce and
    // none when the request sent none (`nonce: null`; a relying party that sent none refuses one);
    // first-party flows, which pass no OIDC request: the session id
    ...(oidc.nonce === null ? {} : { nonce: oidc.nonce || session.id }),
    auth_time: session.authTime,
    // issue 34 §6: the browser's sign-on session, shared by the grants made in it (Front-Channel Logout 1.0 §3)
    sid: session.sid ?? session.id,
    token_type: 'id_token',
    amr: amrOf(session.loginMethod, session.amr ?? []),
    acr: '0',
    at_hash: atHash(accessToken, c.jwt.alg),
    allowed_roles: [...user.roles],
    login_method: session.loginMethod,
  };
  idClaims[o.jwtRoleClaim] = session.roles;
  const idToken = await c.jwt.sign(idClaims, { expiresInSeconds: o.accessTokenExpiresIn, nowSeconds: now });
  let refreshToken: string | null = null;
  let refreshTokenId: string | null = null;
  if (session.scope.includes('offline_access')) {
    refreshTokenId = randomUUID();
    refreshToken = await c.jwt.sign(
      {
        ...common,
        token_type: 'refresh_token',
        auth_time: session.authTime,
        scope: session.scope,
        client_id: clientId,
        // the rotation lineage starts with the session; /oauth/token keeps it across rotations
        family_id: session.id,
        jti: refreshTokenId,
        ...((oidc.refreshResource ?? audience).length > 0 ? { resource: [...(oidc.refreshResource ?? audience)] } : {}),
        ...(oidc.refreshJkt ? { cnf: { jkt: oidc.refreshJkt } } : {}),
      },
      { expiresInSeconds: o.refreshTokenExpiresIn, nowSeconds: now },
    );
  }
  return { accessToken, idToken, refreshToken, refreshTokenId, expiresIn: Math.max(1, o.accessTokenExpiresIn) };
}
