/** @module admin/rpc/event-names — AdminService.EventNames (GET /v1/admin/event_names, issue 35 §3 extension). */
import { EMAIL_TEMPLATE_EVENTS, WEBHOOK_EVENTS } from '../domain/events.ts';
import type { AdminHandler } from './deps.ts';

/**
 * The event names `_add_webhook` and `_add_email_template` accept: `{webhook_events: string[] (the
 * 13 domain events), email_template_events: string[] (the 6 emails)}`, the same lists their
 * validation uses, so a console's form offers exactly what the server takes. The auth guard has
 * already required a super-admin; nothing is read from storage.
 */
export const eventNamesRpc = (): AdminHandler<'EventNames'> => async () => ({
  webhook_events: [...WEBHOOK_EVENTS],
  email_template_events: [...EMAIL_TEMPLATE_EVENTS],
});
