/** @module @gatehouse/admin/rpc/add-email-template — AdminService.AddEmailTemplate (POST /v1/admin/add_email_template, behaviour.md §5.5). */
import { addEmailTemplate, TEMPLATE_ADDED } from '../domain/email-templates.ts';
import { adminAudit, type AdminHandler, type RpcContext } from './deps.ts';

/** @throws AppError as {@link addEmailTemplate} */
export const addEmailTemplateRpc = (c: RpcContext): AdminHandler<'AddEmailTemplate'> => async (req, ctx) => {
  await addEmailTemplate(c, await adminAudit(c, ctx), { eventName: req.event_name, subject: req.subject, template: req.template, design: req.design });
  return { message: TEMPLATE_ADDED };
};
