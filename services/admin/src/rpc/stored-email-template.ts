/** @module @gatehouse/admin/rpc/stored-email-template — AdminInternal.StoredEmailTemplate (behaviour.md §5.5 sending). */
import type { AdminInternalHandler, RpcContext } from './deps.ts';

/** The stored template of an email event, or `found: false` (the worker then renders the built-in one). */
export const storedEmailTemplateRpc = (c: RpcContext): AdminInternalHandler<'StoredEmailTemplate'> => async (req) => {
  const t = await c.store.emailTemplates.findByEvent(req.event_name ?? '');
  return t ? { found: true, subject: t.subject, template: t.template } : { found: false, subject: '', template: '' };
};
