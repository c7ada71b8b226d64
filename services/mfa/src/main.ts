/**
 * @module mfa/main
 * The only file that wires mfa: flags → database (migrations) → store → handlers, plus the outbox
 * relay that moves its email jobs to the bus. `buildMfa` is the module's build (src/index.ts), the
 * same in all-in-one and split mode.
 */
import { countAttempts } from '@gatehouse/auth';
import { consumeUserDeleted } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { jobSealKey } from '@gatehouse/crypto';
import { MFA_RETENTION } from './storage/mikro/retention.ts';
import { databaseOptionsOf, databaseReadiness, deliveryJobFields, openDatabase, resealColumns, startOutboxRelay, startResealer, startSweeper, type ResealCount, type SealedColumn, type SealedOutboxFields } from '@gatehouse/db';
import type { Logger } from '@gatehouse/observability';
import { totpAad, totpSealKey } from './domain/totp.ts';
import { orFatal } from '@gatehouse/rpc';
import type { ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createMfaContext } from './domain/deps.ts';
import { forgetUser } from './domain/enrol.ts';
import { createMfaSubgraph } from './graphql/resolvers.ts';
import { createMfaService, type MfaOptions } from './service.ts';
import { createMikroMfaStore } from './storage/mikro/store.ts';
import { mfaSchema } from './storage/mikro/schema.ts';

/** The flags mfa reads, as its options. */
function mfaOptions(config: Config): MfaOptions {
  return config as unknown as MfaOptions;
}

/** mfa's sealed column (issue 32): TOTP secrets, AES-256-GCM with the user as associated data. */
function mfaSealedColumns(config: Config): SealedColumn[] {
  const ring = totpSealKey(config.encryptionKey, config.clientSecret ?? '');
  return [{ table: 'mfa_totp', key: 'id', column: 'secret_sealed', aadColumns: ['user_id'], ring, aad: (row) => totpAad(String(row.user_id)) }];
}

/** The OTP jobs (`email.send`, `sms.send`) waiting in mfa's outbox, sealed under the jobs' ring (issue 32 §2). */
function mfaJobFields(config: Config): SealedOutboxFields {
  return deliveryJobFields(jobSealKey(config.encryptionKey, config.clientSecret ?? ''));
}

/**
 * `gatehouse reseal` for mfa (issue 32): one pass of the resealer over the TOTP secrets and the OTP jobs
 * waiting in mfa's outbox on the database of `config`, then closes it.
 * @returns per `<table>.<column>`, the values re-sealed and those no key of the ring opens
 */
export async function resealMfa(config: Config, logger: Logger): Promise<Record<string, ResealCount>> {
  const db = await openDatabase(databaseOptionsOf(config), mfaSchema, { logger });
  try {
    return await resealColumns(db, mfaSealedColumns(config), mfaJobFields(config));
  } finally {
    await db.close();
  }
}

/**
 * Builds mfa in this process. mfa calls no other service (issue 14 §5: authn asks it for verdicts);
 * `shared.bus` receives the email jobs through the outbox relay (none: they wait in the outbox);
 * `shared.authenticator` checks signed-in callers (none: their RPCs answer 401).
 */
export async function buildMfa(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'mfa' });
  const db = await orFatal('database', () => openDatabase(databaseOptionsOf(config), mfaSchema, { logger }));
  const store = createMikroMfaStore(db);
  countAttempts(store.failures, shared.registry);
  const deps = { options: mfaOptions(config), store, authenticator: shared.authenticator, logger };
  const service = createMfaService(deps);
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  // issue 23: expired rows go on a period; every replica sweeps (each row is deleted once)
  const sweeper = startSweeper({ db, rules: MFA_RETENTION, logger, registry: shared.registry });
  // issue 32: TOTP secrets sealed under an older --encryption-key are sealed again under the first
  const resealer = startResealer({ db, columns: mfaSealedColumns(config), outbox: mfaJobFields(config), logger });
  // behaviour.md §5.3 delete_user: a deleted user's factors go, also when the event waited for us
  const userDeleted = shared.bus
    ? await consumeUserDeleted(shared.bus, { durable: 'mfa-user-deleted', forget: (userId) => forgetUser(createMfaContext(deps), userId), logger })
    : null;
  if (!shared.bus) logger.warn('no --nats-url: OTP emails stay in the outbox until a bus is configured');
  if (!shared.authenticator) logger.warn('no --redis-url: the mfa RPCs of a signed-in user answer 401 (no session store to check callers against)');
  return {
    public: service.public,
    internal: service.internal,
    schema: () => createMfaSubgraph(service.public),
    readiness: [databaseReadiness(db, databaseOptionsOf(config))],
    async close() {
      await userDeleted?.stop();
      await relay?.stop();
      await sweeper.stop();
      await resealer.stop();
      await db.close();
    },
  };
}
