/** @module @gatehouse/authn/rpc/revoke — AuthnService.Revoke (POST /v1/revoke, behaviour.md §3.5). */
import { revoke, TOKEN_REVOKED } from '../domain/session.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** Deletes the session of a refresh token. @throws AppError as {@link revoke} */
export const revokeRpc = (c: RpcContext): AuthnHandler<'Revoke'> => async (req) => {
  await revoke(c, req.refresh_token);
  return { message: TOKEN_REVOKED };
};
