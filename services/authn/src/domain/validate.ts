/**
 * @module @gatehouse/authn/domain/validate
 * `validate_jwt_token` and `validate_session` (behaviour.md §3.5). No credentials needed;
 * failures are errors, never `is_valid: false`.
 */
import { AppError } from '@gatehouse/errors';
import { sha256Hex, type JWTPayload } from '@gatehouse/crypto';
import type { AuthnContext } from './deps.ts';
import { assertRelations } from './relations.ts';
import type { common } from '@gatehouse/contracts';
import { isRevoked, publicUser } from './user.ts';
import { asObject, optString, optStringList, parseRequiredRelations } from './validation.ts';

const TOKEN_TYPES = ['access_token', 'refresh_token', 'id_token'];
const invalidToken = (cause?: unknown) => new AppError('unauthenticated', 'invalid token', cause === undefined ? {} : { cause });
const unauthorized = () => new AppError('unauthenticated', 'unauthorized');

/** The user exists and is neither revoked nor deactivated (behaviour.md §2.1). */
async function isActive(c: AuthnContext, userId: string): Promise<boolean> {
  if (c.activity) return c.activity.isActive(userId);
  const user = await c.users.findById(userId);
  return user !== null && !isRevoked(user);
}

export async function validateJwtToken(c: AuthnContext, raw: unknown): Promise<{ is_valid: true; claims: JWTPayload }> {
  const req = asObject(raw);
  const tokenType = optString(req, 'token_type');
  const token = optString(req, 'token', 16384);
  const roles = optStringList(req, 'roles');
  const relations = parseRequiredRelations(req);
  if (!tokenType || !TOKEN_TYPES.includes(tokenType)) throw new AppError('invalid_argument', 'invalid token type');
  if (!token) throw invalidToken();
  let claims: JWTPayload;
  try {
    claims = await c.jwt.verify(token, { nowSeconds: c.now() });
  } catch (err) {
    throw invalidToken(err);
  }
  if (claims.iss !== c.options.url || claims.token_type !== tokenType || typeof claims.sub !== 'string') throw invalidToken();
  if (tokenType !== 'id_token') {
    // access and refresh tokens are valid only while their session lives (behaviour.md §2.1)
    const session = typeof claims.nonce === 'string' ? await c.sessions.get(claims.nonce) : null;
    if (!session || session.userId !== claims.sub) throw invalidToken();
    if (tokenType === 'refresh_token' && session.refreshTokenId !== claims.jti) throw invalidToken();
    if (!(await isActive(c, claims.sub))) throw invalidToken();
  }
  if (roles) {
    const claim = claims[c.options.jwtRoleClaim] ?? claims.roles;
    const held = Array.isArray(claim) ? claim : [];
    if (roles.some((r) => !held.includes(r))) throw unauthorized();
  }
  await assertRelations(c, claims.sub, relations);
  return { is_valid: true, claims };
}

export async function validateSession(c: AuthnContext, raw: unknown): Promise<{ is_valid: true; user: common.User }> {
  const req = asObject(raw);
  let cookie = optString(req, 'cookie', 4096)?.trim();
  const roles = optStringList(req, 'roles');
  const relations = parseRequiredRelations(req);
  if (!cookie) throw unauthorized();
  try {
    cookie = decodeURIComponent(cookie);
  } catch {
    // use as given
  }
  const session = await c.sessions.findByHandleHash(sha256Hex(cookie));
  if (!session || session.expiresAt <= c.now()) throw unauthorized();
  const user = await c.users.findById(session.userId);
  if (!user || isRevoked(user)) throw unauthorized();
  if (roles && roles.some((r) => !session.roles.includes(r))) throw unauthorized();
  await assertRelations(c, user.id, relations);
  return { is_valid: true, user: publicUser(user) };
}
