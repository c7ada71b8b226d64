/**
 * @module admin/main
 * The only file that wires admin: flags → database (migrations) → store → handlers and subgraph; the
 * shared admin store (libs/auth: Redis under --redis-url, else this process's) and authn's internal
 * API for the admin session and AdminMeta; the outbox relay that publishes its audit events and
 * webhook jobs; and its bus consumers: the audit log (§5.7), the webhook fan-out of §8 events and the
 * webhook attempt log (§5.4). `buildAdmin` is the module's build (src/index.ts), the same in
 * all-in-one and split mode.
 */
import { adminAccessStoreFor } from '@gatehouse/auth';
import type { Subscription } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf, databaseReadiness, openDatabase, startOutboxRelay, startSweeper } from '@gatehouse/db';
import { adminRetention } from './storage/mikro/retention.ts';
import { checkEndpoint, guardedPost } from '@gatehouse/delivery';
import { bindResolvers, buildSubgraph, orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { AUDIT_CONSUMER, auditRecordedHandler } from './consumers/audit-recorded.ts';
import { ATTEMPTS_CONSUMER, webhookAttemptedHandler } from './consumers/webhook-attempted.ts';
import { FANOUT_CONSUMER, webhookFanoutHandler } from './consumers/webhook-fanout.ts';
import { WEBHOOK_EVENTS } from './domain/events.ts';
import type { Outbound } from './domain/deps.ts';
import { adminBindings, adminFixedErrors } from './graphql/resolvers.ts';
import { adminTypeDefs } from './graphql/schema.ts';
import { createAdminService } from './service.ts';
import { adminSchema } from './storage/mikro/schema.ts';
import { createMikroAdminStore } from './storage/mikro/store.ts';

/** The §5.6 guard and the guarded POST of libs/delivery, under `--allow-private-webhook-targets`. */
function outboundOf(allowPrivate: boolean): Outbound {
  return {
    async checkEndpoint(endpoint) { await checkEndpoint(endpoint, { allowPrivate }); },
    post: (p) => guardedPost({ ...p, allowPrivate }),
  };
}

/** Builds admin in this process; `shared.authenticator` checks its callers, `shared.bus` carries its events. */
export async function buildAdmin(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'admin' });
  const dbOptions = databaseOptionsOf(config);
  const db = await orFatal('database', () => openDatabase(dbOptions, adminSchema, { logger }));
  const store = createMikroAdminStore(db);
  const now = () => Math.floor(Date.now() / 1000);
  const authn = shared.peer('authn.internal');
  if (!authn) logger.warn('no --authn-address: admin/meta answers unavailable');
  const hooks = {
    store, logger, outbound: outboundOf(config.allowPrivateWebhookTargets), now,
    authenticator: shared.authenticator, clientSecret: config.clientSecret,
  };
  const service = createAdminService({
    authenticator: shared.authenticator,
    store: adminAccessStoreFor(config),
    adminSecret: config.adminSecret,
    adminCookieSecure: config.adminCookieSecure,
    meta: {
      ...config, databaseType: config.databaseType ?? 'sqlite', env: config.env ?? 'production', fga: { enabled: config.fga.enabled, store: config.fga.store },
      // all-in-one builds every service in one process, the only writer of its database
      deployment: shared.soleWriter ? 'all-in-one' : 'split',
    },
    authn,
    // issue 32: the admin session's audit rows go through admin's outbox, in a transaction of their own
    async record(name, data) {
      await store.transaction(async (tx) => {
        tx.events.emit(name, data);
      });
    },
    now,
    // issue 33 §4: the notifications worker writes it in this process only in all-in-one
    devOutbox: { enabled: config.devOutbox.email || config.devOutbox.sms, outbox: shared.devOutbox ?? null },
  }, hooks);
  const resolvers = bindResolvers(service.public.desc, service.public.handlers, adminBindings);
  for (const op of ['Query', 'Mutation'] as const) Object.assign((resolvers[op] ??= {}), adminFixedErrors[op]);

  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  // issue 32: the audit log and the webhook logs are bounded by --audit-log-retention / --webhook-log-retention
  const rules = adminRetention({ auditLogSeconds: config.auditLogRetention, webhookLogSeconds: config.webhookLogRetention });
  const sweeper = rules.length > 0 ? startSweeper({ db, rules, logger, registry: shared.registry }) : null;
  const subscriptions: Subscription[] = [];
  if (shared.bus) {
    // the audit store may be down for a while: keep the event and try again for about an hour
    subscriptions.push(await shared.bus.consume({
      durable: AUDIT_CONSUMER, names: ['audit.recorded'], maxAttempts: 100, backoffMs: [1000, 2000, 5000, 10_000, 30_000, 60_000],
      handler: auditRecordedHandler(store, logger),
    }));
    subscriptions.push(await shared.bus.consume({
      durable: FANOUT_CONSUMER, names: WEBHOOK_EVENTS, maxAttempts: 100, backoffMs: [1000, 2000, 5000, 10_000, 30_000, 60_000],
      handler: webhookFanoutHandler(hooks),
    }));
    subscriptions.push(await shared.bus.consume({
      durable: ATTEMPTS_CONSUMER, names: ['webhook.attempted'], maxAttempts: 100, backoffMs: [1000, 2000, 5000, 10_000, 30_000, 60_000],
      handler: webhookAttemptedHandler(store, logger),
    }));
  } else {
    logger.warn('no bus: audit rows, webhook deliveries and their logs wait in the outboxes until one is configured');
  }
  return {
    public: service.public,
    internal: service.internal,
    schema: () => buildSubgraph(adminTypeDefs, resolvers),
    readiness: [databaseReadiness(db, dbOptions)],
    async close() {
      for (const s of subscriptions) await s.stop();
      await relay?.stop();
      await sweeper?.stop();
      await db.close();
    },
  };
}
