/** @module @gatehouse/admin/rpc/update-email-template — AdminService.UpdateEmailTemplate (POST /v1/admin/update_email_template, behaviour.md §5.5). */
import { TEMPLATE_UPDATED, updateEmailTemplate } from '../domain/email-templates.ts';
import { adminAudit, type AdminHandler, type RpcContext } from './deps.ts';

/** @throws AppError as {@link updateEmailTemplate} */
export const updateEmailTemplateRpc = (c: RpcContext): AdminHandler<'UpdateEmailTemplate'> => async (req, ctx) => {
  await updateEmailTemplate(c, await adminAudit(c, ctx), {
    id: req.id, eventName: req.event_name, subject: req.subject, template: req.template, design: req.design,
  });
  return { message: TEMPLATE_UPDATED };
};
