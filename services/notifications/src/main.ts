/**
 * @module notifications/main
 * The only file that wires the worker: flags → database (delivery records, outbox) → SMTP mailer →
 * durable consumers on the bus: `email.send` (when SMTP is configured) and `webhook.deliver` (when
 * admin's internal API is reachable), plus the outbox relay that reports webhook attempts to admin.
 * `buildNotifications` is the module's build (src/index.ts): in split mode it consumes from NATS
 * JetStream (src/index.ts requires --nats-url), in all-in-one from its bus.
 */
import type { Subscription } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf, openDatabase, startOutboxRelay } from '@gatehouse/db';
import { fatal, orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createNotificationsService } from './service.ts';
import { createSmtpMailer, type Mailer } from './smtp/mailer.ts';
import { notificationsSchema } from './storage/mikro/schema.ts';
import { adminTemplateLookup, startWebhookWorker } from './webhooks.ts';

/** An SMTP mailer from the `--smtp-*` flags (the caller checks `config.isEmailConfigured`). */
function mailerOf(config: Config): Mailer {
  return createSmtpMailer({
      host: config.smtpHost!,
      port: config.smtpPort!,
      username: config.smtpUsername,
      password: config.smtpPassword,
      senderEmail: config.smtpSenderEmail!,
      senderName: config.smtpSenderName,
      localName: config.smtpLocalName,
      skipTlsVerification: config.skipTlsVerification,
  });
}

/**
 * Builds and starts the worker in this process. Without SMTP configured the email consumer does not
 * start (jobs wait in the stream rather than being retried into dead letters); without admin's
 * address the webhook consumer does not start (jobs wait likewise).
 */
export async function buildNotifications(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'notifications' });
  const bus = shared.bus ?? fatal('the notifications worker consumes delivery jobs from a bus (--nats-url in split mode)');
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), notificationsSchema, { logger }));
  const admin = shared.peer('admin.internal');
  const relay = startOutboxRelay({ db, bus, logger });
  let webhooks: Subscription | null = null;
  if (admin) webhooks = await startWebhookWorker({ bus, db, admin, allowPrivate: config.allowPrivateWebhookTargets, logger, registry: shared.registry });
  else logger.warn('no --admin-address: the webhook worker is not started (deliveries wait in the stream)');
  let email: ReturnType<typeof createNotificationsService> | null = null;
  if (config.isEmailConfigured) {
    email = createNotificationsService({
      bus,
      db,
      mailer: mailerOf(config),
      options: { organizationName: config.organizationName, organizationLogo: config.organizationLogo ?? '' },
      logger,
      registry: shared.registry,
      templateFor: admin ? adminTemplateLookup(admin) : undefined,
    });
    await email.start();
  } else {
    logger.info('SMTP is not configured (--smtp-host, --smtp-port, --smtp-sender-email): the email worker is not started');
  }
  return {
    async close() {
      await email?.stop();
      await webhooks?.stop();
      await relay.stop();
      await db.close();
    },
  };
}
