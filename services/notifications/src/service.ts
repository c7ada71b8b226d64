/**
 * @module @gatehouse/notifications/service
 * createNotificationsService(deps): the worker that consumes delivery jobs from the bus
 * (ARCHITECTURE §2 and §4). It serves nothing public.
 */
import type { Bus, Subscription } from '@gatehouse/bus';
import type { Database } from '@gatehouse/db';
import { AppError } from '@gatehouse/errors';
import type { Logger, Registry } from '@gatehouse/observability';
import { createEmailSendHandler, type TemplateLookup } from './consumers/email-send.ts';
import type { Mailer } from './smtp/mailer.ts';
import { EMAIL_SEND } from './job.ts';
import { deliveryCounter } from './metrics.ts';
import { createMikroDeliveryStore } from './storage/mikro/store.ts';
import type { DeliveryStore } from './storage/storage.ts';

/** Durable consumer name of the email worker, stable across restarts. */
export const EMAIL_CONSUMER = 'notifications-email';
/** Default retry policy: 5 attempts, waits 1 s, 2 s, 4 s, 8 s (about 15 s in all). */
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
  readonly mailer: Mailer;
  readonly options: NotificationsOptions;
  readonly logger: Logger;
  readonly registry: Registry;
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
  const handler = createEmailSendHandler({
    store,
    mailer: deps.mailer,
    organizationName: deps.options.organizationName,
    organizationLogo: deps.options.organizationLogo,
    logger,
    deliveries: deliveryCounter(deps.registry),
    templateFor: deps.templateFor,
  });
  let subscription: Subscription | null = null;
  let starting: Promise<void> | null = null;
  return {
    start() {
      starting ??= (async () => {
        subscription = await deps.bus.consume({
          durable: EMAIL_CONSUMER,
          names: [EMAIL_SEND],
          maxAttempts: deps.options.maxAttempts ?? DEFAULT_EMAIL_MAX_ATTEMPTS,
          backoffMs: deps.options.backoffMs ?? DEFAULT_EMAIL_BACKOFF_MS,
          handler,
        });
        logger.info({ consumer: EMAIL_CONSUMER, names: [EMAIL_SEND] }, 'notifications consumer started');
      })();
      return starting;
    },
    async stop() {
      if (starting) await starting.catch(() => undefined);
      const sub = subscription;
      subscription = null;
      starting = null;
      if (sub) {
        await sub.stop();
        logger.info({ consumer: EMAIL_CONSUMER }, 'notifications consumer stopped');
      }
    },
  };
}
