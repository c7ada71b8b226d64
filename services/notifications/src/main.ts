/**
 * @module notifications/main
 * The only file that wires the worker: flags → database (delivery records, outbox) → SMTP mailer and
 * Twilio sender → durable consumers on the bus: `email.send` (when SMTP is configured), `sms.send`
 * (when Twilio is), `webhook.deliver` (when admin's internal API is reachable) and
 * `oauth.backchannel_logout` (issue 34 §6), plus the outbox
 * relay that reports webhook attempts to admin. `buildNotifications` is the module's build
 * (src/index.ts): in split mode it consumes from NATS JetStream (src/index.ts requires --nats-url), in
 * all-in-one from its bus.
 */
import { jobSealKey } from '@gatehouse/crypto';
import { createDevOutbox } from '@gatehouse/delivery';
import type { Subscription } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf, databaseReadiness, openDatabase, startOutboxRelay, startSweeper } from '@gatehouse/db';
import { NOTIFICATIONS_RETENTION } from './storage/mikro/retention.ts';
import { fatal, orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createNotificationsService } from './service.ts';
import { createSmtpMailer, type Mailer } from './smtp/mailer.ts';
import { createTwilioSender, type SmsSender } from './twilio/sender.ts';
import { devOutboxMailer, devOutboxSmsSender } from './dev-outbox.ts';
import { notificationsSchema } from './storage/mikro/schema.ts';
import { adminTemplateLookup, startBackchannelLogoutWorker, startWebhookWorker } from './webhooks.ts';

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

/** A Twilio sender from the `--twilio-*` flags (the caller checks `config.isSmsConfigured`). */
function smsSenderOf(config: Config): SmsSender {
  return createTwilioSender({
    accountSid: config.twilioAccountSid!,
    apiKey: config.twilioApiKey!,
    apiSecret: config.twilioApiSecret!,
    sender: config.twilioSender!,
    apiUrl: config.twilioApiUrl,
  });
}

/**
 * Builds and starts the worker in this process: the email consumer when SMTP is configured, the SMS
 * consumer when Twilio is (behaviour.md §1.3), the webhook consumer when admin's address is known. A
 * channel without its provider starts no consumer: its jobs wait in the stream (durable) rather than
 * being retried into dead letters; under `--env=development` the development outbox is its provider
 * (issue 33 §4).
 */
export async function buildNotifications(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'notifications' });
  const bus = shared.bus ?? fatal('the notifications worker consumes delivery jobs from a bus (--nats-url in split mode)');
  const dbOptions = databaseOptionsOf(config);
  const db = await orFatal('database', () => openDatabase(dbOptions, notificationsSchema, { logger }));
  const admin = shared.peer('admin.internal');
  const relay = startOutboxRelay({ db, bus, logger });
  // issue 23: delivery records older than a week go on a period; every replica sweeps (each row once)
  const sweeper = startSweeper({ db, rules: NOTIFICATIONS_RETENTION, logger, registry: shared.registry });
  let webhooks: Subscription | null = null;
  if (admin) webhooks = await startWebhookWorker({ bus, db, admin, allowPrivate: config.allowPrivateWebhookTargets, logger, registry: shared.registry });
  else logger.warn('no --admin-address: the webhook worker is not started (deliveries wait in the stream)');
  // issue 34 §6: OIDC Back-Channel Logout 1.0 logout tokens from authn
  const backchannel = await startBackchannelLogoutWorker({ bus, allowPrivate: config.allowPrivateWebhookTargets, logger, registry: shared.registry });
  // issue 33 §4: under --env=development a channel without its provider keeps its messages in the
  // development outbox (all-in-one: the one admin lists; split mode: this process's, in its log only)
  const outbox = config.devOutbox.email || config.devOutbox.sms ? (shared.devOutbox ?? createDevOutbox()) : null;
  const mailer = config.isEmailConfigured ? mailerOf(config) : outbox && config.devOutbox.email ? devOutboxMailer(outbox, logger) : undefined;
  const smsSender = config.isSmsConfigured ? smsSenderOf(config) : outbox && config.devOutbox.sms ? devOutboxSmsSender(outbox, logger) : undefined;
  if (config.devOutbox.email) {
    logger.warn('SMTP is not configured and --env=development: emails are kept in the development outbox and logged, not sent');
  } else if (!config.isEmailConfigured) {
    logger.info('SMTP is not configured (--smtp-host, --smtp-port, --smtp-sender-email): the email worker is not started');
  }
  if (config.devOutbox.sms) {
    logger.warn('SMS is not configured and --env=development: text messages are kept in the development outbox and logged, not sent');
  } else if (!config.isSmsConfigured) {
    logger.info('SMS is not configured (--twilio-account-sid, --twilio-api-key, --twilio-api-secret, --twilio-sender): the SMS worker is not started');
  }
  if (config.twilioApiUrl && config.isSmsConfigured) logger.warn({ url: config.twilioApiUrl }, '--twilio-api-url is set: text messages go to a stand-in, not to Twilio (development and testing only)');
  let messages: ReturnType<typeof createNotificationsService> | null = null;
  if (mailer || smsSender) {
    messages = createNotificationsService({
      bus,
      db,
      mailer,
      smsSender,
      options: { organizationName: config.organizationName, organizationLogo: config.organizationLogo ?? '' },
      logger,
      registry: shared.registry,
      templateFor: admin ? adminTemplateLookup(admin) : undefined,
      // the key authn and mfa seal links and codes with (issue 23): the same flags in every process
      jobKey: jobSealKey(config.encryptionKey, config.clientSecret),
    });
    await messages.start();
  }
  return {
    readiness: [databaseReadiness(db, dbOptions)],
    async close() {
      await messages?.stop();
      await webhooks?.stop();
      await backchannel.stop();
      await relay.stop();
      await sweeper.stop();
      await db.close();
    },
  };
}
