/**
 * @module notifications/main
 * The only file that wires the worker: flags → database (delivery records) → SMTP mailer → durable
 * consumers on the bus. `gatehouse notifications` in split mode consumes from NATS JetStream;
 * all-in-one runs the same consumers on its bus.
 */
import { parseConfigOrExit, type Config } from '@gatehouse/config';
import { databaseOptionsOf, openDatabase } from '@gatehouse/db';
import { createJetStreamBus, type Bus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry, startMetricsServer, type Logger, type LogLevel, type Registry } from '@gatehouse/observability';
import { closeOnSignal, fatal, orFatal, startServiceHttp } from '@gatehouse/rpc';
import { createNotificationsService } from './service.ts';
import { createSmtpMailer, type Mailer } from './domain/mailer.ts';
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
export async function buildNotifications(config: Config, shared: { logger: Logger; registry: Registry; bus: Bus }): Promise<{ close(): Promise<void> }> {
  const logger = shared.logger.child({ service: 'notifications' });
  if (!config.isEmailConfigured) {
    logger.info('SMTP is not configured (--smtp-host, --smtp-port, --smtp-sender-email): the email worker is not started');
    return { async close() {} };
  }
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), notificationsSchema, { logger }));
  const service = createNotificationsService({
    bus: shared.bus,
    db,
    mailer: mailerOf(config),
    options: { organizationName: config.organizationName, organizationLogo: config.organizationLogo ?? '' },
    logger,
    registry: shared.registry,
  });
  await service.start();
  return {
    async close() {
      await service.stop();
      await db.close();
    },
  };
}

/** `gatehouse notifications [flags]` (split mode). */
export async function runNotifications(argv: readonly string[]): Promise<void> {
  const config = parseConfigOrExit('notifications', argv);
  const logger = createLogger(config.logLevel as LogLevel).child({ service: 'notifications' });
  if (!config.natsUrl) fatal('--nats-url is required for `gatehouse notifications`: the worker consumes delivery jobs from NATS JetStream');
  const registry = createMetricsRegistry();
  const bus = await orFatal('database', () => createJetStreamBus({ url: config.natsUrl!, logger, stream: config.natsStream, subjectPrefix: config.natsStream.toLowerCase() }));
  const worker = await buildNotifications(config, { logger, registry, bus });
  const http = await orFatal({ host: config.host, port: config.httpPort }, () => startServiceHttp({ host: config.host, port: config.httpPort, internalToken: '', logger }));
  const metrics = await orFatal({ host: config.metricsHost, port: config.metricsPort }, () => startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry }));
  logger.info({ http_port: http.port, metrics_port: metrics.port }, 'notifications started');
  closeOnSignal([() => bus.close(), worker.close, http.close, metrics.close], (m) => logger.info(m));
}
