/** @module @gatehouse/authn/rpc/verification-requests — AuthnService.VerificationRequests (POST /v1/admin/verification_requests, behaviour.md §5.3). */
import { listVerificationRequests } from '../domain/admin-users.ts';
import { paginationOf } from '@gatehouse/contracts/pagination';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** A page of verification requests; `token` and `nonce` are always null (secrets are never listed). */
export const verificationRequestsRpc = (c: RpcContext): AuthnHandler<'VerificationRequests'> => async (req) => {
  const { page, result } = await listVerificationRequests(c, req);
  return {
    verification_requests: result.rows.map((r) => ({
      id: r.id, identifier: r.identifier, token: null, email: r.email, expires: r.expiresAt,
      created_at: r.createdAt, updated_at: r.updatedAt, nonce: null, redirect_uri: r.redirectUri,
    })),
    pagination: paginationOf(page, result.total),
  };
};
