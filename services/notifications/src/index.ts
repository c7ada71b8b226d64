/**
 * @module @gatehouse/notifications
 * The delivery worker: email (SMTP), SMS (Twilio) and webhooks (issue 17); the job contracts producers enqueue through the outbox.
 * `notificationsModule` is its entry in services/registry.ts (docs/architecture.md).
 */
import type { ServiceModule } from '@gatehouse/service';

export const notificationsModule: ServiceModule = {
  name: 'notifications',
  summary: 'the delivery worker: email, SMS and webhooks',
  // webhook targets and stored email templates (issue 17, behaviour.md §5.4, §5.5)
  calls: ['admin.internal'],
  requires: [{ key: 'natsUrl', why: 'the worker consumes delivery jobs from NATS JetStream' }],
  async build(config, shared) {
    const { buildNotifications } = await import('./main.ts');
    return buildNotifications(config, shared);
  },
};

export { EMAIL_EVENTS, EMAIL_SEND, emailJobEnvelope, isEmailEventName, parseEmailJob } from './job.ts';
export type { EmailEventName, EmailJob } from './job.ts';
export { parseSmsJob, SMS_EVENT, SMS_SEND, smsBody, smsJobEnvelope } from './sms-job.ts';
export type { SmsJob } from './sms-job.ts';
export { createTwilioSender, isPermanentTwilioFailure } from './twilio/sender.ts';
export type { OutgoingSms, SmsSender, TwilioOptions } from './twilio/sender.ts';
export { createSmsSendHandler } from './consumers/sms-send.ts';
export type { SmsSendDeps } from './consumers/sms-send.ts';
export { renderEmail, htmlToText, validateTemplateSyntax } from './domain/render.ts';
export type { RenderOptions, RenderedEmail } from './domain/render.ts';
export { defaultSubject, defaultTemplate } from './domain/default-templates.ts';
export { createSmtpMailer, fromMailbox } from './smtp/mailer.ts';
export type { Mailer, OutgoingEmail, SmtpOptions } from './smtp/mailer.ts';
export { createEmailSendHandler } from './consumers/email-send.ts';
export type { EmailSendDeps, TemplateLookup } from './consumers/email-send.ts';
export {
  createNotificationsService, DEFAULT_EMAIL_BACKOFF_MS, DEFAULT_EMAIL_MAX_ATTEMPTS, EMAIL_CONSUMER, SMS_CONSUMER,
} from './service.ts';
export type { NotificationsDeps, NotificationsOptions, NotificationsService } from './service.ts';
export { DELIVERIES_METRIC, deliveryCounter } from './metrics.ts';
export { createMemoryDeliveryStore } from './storage/memory.ts';
export { createMikroDeliveryStore } from './storage/mikro/store.ts';
export { NotificationAttempt, NotificationJob, notificationsSchema } from './storage/mikro/schema.ts';
export type {
  AttemptOutcome, DeliveryAttempt, DeliveryChannel, DeliveryJob, DeliveryStore, JobStatus, NewAttempt,
} from './storage/storage.ts';
