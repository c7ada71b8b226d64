/**
 * @module @gatehouse/authn/rpc/consent
 * The consent-grant RPCs (issue 34): `consent_grants` and `revoke_consent_grant` for the signed-in
 * user (the account console), `_user_consent_grants` and `_revoke_user_consent_grant` for an admin.
 * Each revocation is recorded in the audit log as `token.consent_revoked`.
 */
import { SUPER_ADMIN_ACTOR, auditRecord, type AuditActor } from '@gatehouse/auth';
import type { authn } from '@gatehouse/contracts';
import { paginationOf } from '@gatehouse/contracts/pagination';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import { listConsentGrants, revokeConsentGrant, type ListedGrant } from '../domain/consent.ts';
import type { ConsentGrantRecord } from '../storage/ports.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

export const CONSENT_REVOKED = 'Consent revoked';

const wireGrant = (g: ListedGrant): authn.ConsentGrant => ({
  id: g.id, user_id: g.userId, client_id: g.clientId, client_name: g.clientName, scopes: g.scope, created_at: g.createdAt, updated_at: g.updatedAt,
});

/** Records a revocation (behaviour.md §5.7 shape). Best effort: never throws. */
async function recordRevoked(c: RpcContext, ctx: CallContext, actor: AuditActor, g: ConsentGrantRecord): Promise<void> {
  try {
    const record = auditRecord(ctx, 'token.consent_revoked', {
      actor, resourceType: 'consent_grant', resourceId: g.id, details: { client_id: g.clientId, user_id: g.userId, scope: g.scope.join(' ') }, at: c.now(),
    });
    await c.users.transaction(async (tx) => { tx.events.emit('audit.recorded', record); });
  } catch (err) {
    c.logger.warn({ err }, 'audit event not recorded');
  }
}

/** `consent_grants` → the caller's grants, newest first. @throws AppError `unauthenticated`, `invalid_argument` (page) */
export const consentGrantsRpc = (c: RpcContext): AuthnHandler<'ConsentGrants'> => async (req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  const { page, result } = await listConsentGrants(c, caller.userId, req.pagination);
  return { consent_grants: result.rows.map(wireGrant), pagination: paginationOf(page, result.total) };
};

/** `revoke_consent_grant` → `Consent revoked`; ends the caller's sessions with that client. @throws AppError `not_found` (also another user's grant) */
export const revokeConsentGrantRpc = (c: RpcContext): AuthnHandler<'RevokeConsentGrant'> => async (req, ctx) => {
  const caller = await c.authenticator.requireUser(ctx);
  const grant = await revokeConsentGrant(c, req.id, caller.userId);
  await recordRevoked(c, ctx, { type: 'user', id: caller.userId }, grant);
  return { message: CONSENT_REVOKED };
};

/** `_user_consent_grants` → a user's grants, for an admin. @throws AppError `invalid_argument` `user_id is required` */
export const userConsentGrantsRpc = (c: RpcContext): AuthnHandler<'UserConsentGrants'> => async (req) => {
  const userId = (req.user_id ?? '').trim();
  if (userId === '') throw new AppError('invalid_argument', 'user_id is required');
  const { page, result } = await listConsentGrants(c, userId, req.pagination);
  return { consent_grants: result.rows.map(wireGrant), pagination: paginationOf(page, result.total) };
};

/** `_revoke_user_consent_grant` → `Consent revoked`; ends that user's sessions with that client. */
export const revokeUserConsentGrantRpc = (c: RpcContext): AuthnHandler<'RevokeUserConsentGrant'> => async (req, ctx) => {
  const grant = await revokeConsentGrant(c, req.id, null);
  await recordRevoked(c, ctx, SUPER_ADMIN_ACTOR, grant);
  return { message: CONSENT_REVOKED };
};
