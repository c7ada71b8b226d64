/**
 * @module @gatehouse/notifications/service
 * createNotificationsService(deps): the worker that consumes delivery jobs from the bus
 * (ARCHITECTURE §2 and §4). It serves nothing public.
 */
import type { KeyRing } from '@gatehouse/crypto';
import type { Bus, Subscription } from '@gatehouse/bus';
import type { Database } from '@gatehouse/db';
import { AppError } from '@gatehouse/errors';
import type { Logger, Registry } from '@gatehouse/observability';
import { createEmailSendHandler, type TemplateLookup } from './consumers/email-send.ts';
import { createSmsSendHandler } from './consumers/sms-send.ts';
import type { Mailer } from './smtp/mailer.ts';
import type { SmsSender } from './twilio/sender.ts';
import { EMAIL_SEND } from './job.ts';
import { SMS_SEND } from './sms-job.ts';
import { deliveryCounter } from './metrics.ts';
import { createMikroDeliveryStore } from './storage/mikro/store.ts';
import type { DeliveryStore } from './storage/storage.ts';

/** Durable consumer name of the email worker, stable across restarts. */
export const EMAIL_CONSUMER = 'notifications-email';
/** Durable consumer name of the SMS worker, stable across restarts. */
export const SMS_CONSUMER = 'notifications-sms';
/** Default retry policy (email and SMS): 5 attempts, waits 1 s, 2 s, 4 s, 8 s (about 15 s in all). */
export const DEFAULT_EMAIL_MAX_ATTEMPTS = 5;
export const DEFAULT_EMAIL_BACKOFF_MS: readonly number[] = [1000, 2000, 4000, 8000];

export interface NotificationsOptions {
  /** `--organization-name` */
  readonly organizationName: string;
  /** `--organization-logo` (empty = none) */
  readonly organizationLogo: string;
  /** total attempts per job, first included (default 5) */
  readonly maxAttempts?: number | undefined;
  /** waits between attempts in ms; the last value repeats (default [1000, 2000, 4000, 8000]) */
  readonly backoffMs?: readonly number[] | undefined;
}

export interface NotificationsDeps {
  readonly bus: Bus;
  /**
   * the service's database, opened with `openDatabase(options, notificationsSchema, { logger })`;
   * delivery records live in `notification_attempts` and `notification_jobs`
   */
  readonly db?: Database | undefined;
  /** a DeliveryStore to use instead of `db` (unit tests: createMemoryDeliveryStore) */
  readonly store?: DeliveryStore | undefined;
  /** the SMTP transport; without it no `email.send` consumer starts (jobs wait in the stream) */
  readonly mailer?: Mailer | undefined;
  /** the Twilio transport; without it no `sms.send` consumer starts (jobs wait in the stream) */
  readonly smsSender?: SmsSender | undefined;
  readonly options: NotificationsOptions;
  readonly logger: Logger;
  readonly registry: Registry;
  /** the job seal key (libs/crypto `jobSealKey` of --encryption-key / --client-secret): opens the sealed links and codes of jobs (issue 23) */
  readonly jobKey?: KeyRing | undefined;
  /** stored email templates (admin); built-in templates when absent */
  readonly templateFor?: TemplateLookup | undefined;
}

export interface NotificationsService {
  /** Starts the durable consumers; resolves once they are subscribed. Idempotent. */
  start(): Promise<void>;
  /** Stops consuming (in-flight deliveries finish or are redelivered later). Idempotent. */
  stop(): Promise<void>;
}

/**
 * Builds the notifications worker. Nothing is consumed until `start()`.
 *
 * @throws AppError `invalid_argument` when neither `db` nor `store` is given
 */
export function createNotificationsService(deps: NotificationsDeps): NotificationsService {
  const store = deps.store ?? (deps.db ? createMikroDeliveryStore(deps.db) : undefined);
  if (!store) throw new AppError('invalid_argument', 'notifications needs a database (db) or a delivery store');
  const logger = deps.logger.child({ service: 'notifications' });
  const deliveries = deliveryCounter(deps.registry);
  const consumers: Array<{ durable: string; name: string; handler: Parameters<Bus['consume']>[0]['handler'] }> = [];
  if (deps.mailer) {
    consumers.push({
      durable: EMAIL_CONSUMER,
      name: EMAIL_SEND,
      handler: createEmailSendHandler({
        store,
        mailer: deps.mailer,
        organizationName: deps.options.organizationName,
        organizationLogo: deps.options.organizationLogo,
        logger,
        deliveries,
        templateFor: deps.templateFor,
        jobKey: deps.jobKey,
      }),
    });
  }
  if (deps.smsSender) {
    consumers.push({ durable: SMS_CONSUMER, name: SMS_SEND, handler: createSmsSendHandler({ store, sender: deps.smsSender, logger, deliveries, jobKey: deps.jobKey }) });
  }
  let subscriptions: Subscription[] = [];
  let starting: Promise<void> | null = null;
  return {
    start() {
      starting ??= (async () => {
        for (const c of consumers) {
          subscriptions.push(await deps.bus.consume({
            durable: c.durable,
            names: [c.name],
            maxAttempts: deps.options.maxAttempts ?? DEFAULT_EMAIL_MAX_ATTEMPTS,
            backoffMs: deps.options.backoffMs ?? DEFAULT_EMAIL_BACKOFF_MS,
            handler: c.handler,
          }));
          logger.info({ consumer: c.durable, names: [c.name] }, 'notifications consumer started');
        }
      })();
      return starting;
    },
    async stop() {
      if (starting) await starting.catch(() => undefined);
      const subs = subscriptions;
      subscriptions = [];
      starting = null;
      for (const sub of subs) await sub.stop();
      if (subs.length > 0) logger.info({ consumers: consumers.map((c) => c.durable) }, 'notifications consumers stopped');
    },
  };
}
