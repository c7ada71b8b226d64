/** @module @gatehouse/authn/rpc/invite-members — AuthnService.InviteMembers (POST /v1/admin/invite_members, behaviour.md §5.3). */
import { inviteMembers, invitedMessage } from '../domain/invite.ts';
import { publicUser } from '../domain/user.ts';
import { adminAuditOf } from './admin-audit.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** @throws AppError `invalid_argument`, `failed_precondition`, `already_exists` (see inviteMembers) */
export const inviteMembersRpc = (c: RpcContext): AuthnHandler<'InviteMembers'> => async (req, ctx) => {
  const users = await inviteMembers(c, { emails: req.emails, redirectUri: req.redirect_uri }, adminAuditOf(ctx));
  return { message: invitedMessage(users.length), users: users.map((u) => publicUser(u)) };
};
