/** @module @gatehouse/admin/rpc/delete-email-template — AdminService.DeleteEmailTemplate (POST /v1/admin/delete_email_template, behaviour.md §5.5). */
import { deleteEmailTemplate, TEMPLATE_DELETED } from '../domain/email-templates.ts';
import { adminAudit, type AdminHandler, type RpcContext } from './deps.ts';

/** @throws AppError as {@link deleteEmailTemplate} */
export const deleteEmailTemplateRpc = (c: RpcContext): AdminHandler<'DeleteEmailTemplate'> => async (req, ctx) => {
  await deleteEmailTemplate(c, await adminAudit(c, ctx), req.id);
  return { message: TEMPLATE_DELETED };
};
