/** @module @gatehouse/admin/rpc/email-templates — AdminService.EmailTemplates (POST /v1/admin/email_templates, behaviour.md §5.5, §10). */
import { listEmailTemplates } from '../domain/email-templates.ts';
import type { AdminHandler, RpcContext } from './deps.ts';

/** Templates, newest first. @throws AppError `invalid_argument` (pagination) */
export const emailTemplatesRpc = (c: RpcContext): AdminHandler<'EmailTemplates'> => async (req) => {
  const { emailTemplates, pagination } = await listEmailTemplates(c, req);
  return {
    email_templates: emailTemplates.map((t) => ({
      id: t.id, event_name: t.eventName, subject: t.subject, template: t.template, design: t.design, created_at: t.createdAt, updated_at: t.updatedAt,
    })),
    pagination,
  };
};
