/** @module admin/rpc/dev-outbox — AdminService.DevOutbox (GET /v1/admin/dev_outbox, issue 33 §4 extension). */
import { AppError } from '@gatehouse/errors';
import type { AdminHandler, AdminRpcDeps } from './deps.ts';

/**
 * The messages the development outbox kept, newest first (at most 100): `{messages: [{id, channel
 * ('email' | 'sms'), to, subject, text, html, created_at (Unix s)}]}`. The auth guard has already
 * required a super-admin.
 * @throws AppError `failed_precondition` when the outbox is off (production, or both providers
 *   configured), or when it lives in another process (split mode: the notifications worker's log)
 */
export const devOutboxRpc = (d: AdminRpcDeps): AdminHandler<'DevOutbox'> => async () => {
  if (!d.devOutbox?.enabled) {
    throw new AppError('failed_precondition',
      'the development outbox is off: it runs only with --env=development for a channel without SMTP or Twilio', { reason: 'dev_outbox_off' });
  }
  if (!d.devOutbox.outbox) {
    throw new AppError('failed_precondition',
      'the development outbox is kept by the notifications process in split mode: read its log lines "development outbox: email kept" and "development outbox: sms kept"',
      { reason: 'dev_outbox_other_process' });
  }
  return {
    messages: d.devOutbox.outbox.list().map((m) => ({
      id: m.id, channel: m.channel, to: m.to, subject: m.subject, text: m.text, html: m.html, created_at: m.createdAt,
    })),
  };
};
