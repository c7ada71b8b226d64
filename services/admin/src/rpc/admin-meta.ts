/** @module admin/rpc/admin-meta — AdminService.AdminMeta (GET /v1/admin/meta, behaviour.md §5.2). */
import { AppError } from '@gatehouse/errors';
import { adminMeta } from '../domain/admin-meta.ts';
import type { AdminHandler, AdminRpcDeps } from './deps.ts';

/**
 * Meta from authn's internal API, plus the admin-only fields.
 * @throws AppError `unavailable` when authn cannot be reached (or no --authn-address in split mode)
 */
export const adminMetaRpc = (d: AdminRpcDeps): AdminHandler<'AdminMeta'> => async (_req, ctx) => {
  if (!d.authn) throw new AppError('unavailable', 'authn service is not configured', { reason: 'no_authn_address' });
  return adminMeta(await d.authn.GetMeta({}, ctx), d.meta);
};
