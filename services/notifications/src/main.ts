/**
 * @module notifications/main
 * The only file that wires the worker: flags → database (delivery records) → SMTP mailer → durable
 * consumers on the bus. `buildNotifications` is the module's build (src/index.ts): in split mode it
 * consumes from NATS JetStream (src/index.ts requires --nats-url), in all-in-one from its bus.
 */
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf, databaseReadiness, openDatabase } from '@gatehouse/db';
import { fatal, orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createNotificationsService } from './service.ts';
import { createSmtpMailer, type Mailer } from './smtp/mailer.ts';
import { notificationsSchema } from './storage/mikro/schema.ts';

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
 * Builds and starts the worker in this process. Without SMTP configured no consumer starts: jobs wait
 * in the stream (durable) rather than being retried into dead letters.
 */
export async function buildNotifications(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'notifications' });
  const bus = shared.bus ?? fatal('the notifications worker consumes delivery jobs from a bus (--nats-url in split mode)');
  if (!config.isEmailConfigured) {
    logger.info('SMTP is not configured (--smtp-host, --smtp-port, --smtp-sender-email): the email worker is not started');
    return { async close() {} };
  }
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), notificationsSchema, { logger }));
  const service = createNotificationsService({
    bus,
    db,
    mailer: mailerOf(config),
    options: { organizationName: config.organizationName, organizationLogo: config.organizationLogo ?? '' },
    logger,
    registry: shared.registry,
  });
  await service.start();
  return {
    readiness: [databaseReadiness(db, databaseOptionsOf(config))],
    async close() {
      await service.stop();
      await db.close();
    },
  };
}
