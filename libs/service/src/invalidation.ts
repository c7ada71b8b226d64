/**
 * @module @gatehouse/service/invalidation
 * Picks the process's notification channel (libs/auth README "Credential caches", docs/architecture.md
 * "Caches and invalidation"): Redis pub/sub under `--redis-url`; else PostgreSQL LISTEN/NOTIFY when the
 * main database is PostgreSQL; else in process (exact for SQLite all-in-one, which also watches
 * `PRAGMA data_version`; polling every {@link INVALIDATION_POLL_MS} ms for other processes' writes otherwise).
 */
import { createLocalInvalidation, createPostgresInvalidation, createRedisInvalidation, INVALIDATION_POLL_MS, type InvalidationChannel } from '@gatehouse/auth';
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf } from '@gatehouse/db';
import type { StateLogger } from '@gatehouse/observability';

/**
 * The channel for this process.
 * @param soleWriter all-in-one: no other process writes the database (then the in-process channel is exact on SQLite)
 */
export function invalidationFor(config: Config, o: { soleWriter: boolean; logger: StateLogger }): InvalidationChannel {
  const options = { logger: o.logger, notificationsOff: config.testNotificationsOff };
  if (config.redisUrl) return createRedisInvalidation(config.redisUrl, `gatehouse:${config.clientId}:invalidate:`, options);
  const db = databaseOptionsOf(config);
  if (db.type === 'postgres') {
    const ssl = db.caCert || db.cert ? { ...(db.caCert ? { ca: db.caCert } : {}), ...(db.cert ? { cert: db.cert } : {}), ...(db.certKey ? { key: db.certKey } : {}) } : undefined;
    return createPostgresInvalidation({
      ...(db.url ? { connectionString: db.url } : {}),
      ...(db.host ? { host: db.host } : {}),
      ...(db.port ? { port: db.port } : {}),
      ...(db.name ? { database: db.name } : {}),
      ...(db.username ? { user: db.username } : {}),
      ...(db.password ? { password: db.password } : {}),
      ...(ssl ? { ssl } : {}),
    }, options);
  }
  // SQLite all-in-one: every writer is this process, or another on the file (PRAGMA data_version)
  return createLocalInvalidation({ ...options, soleWriter: o.soleWriter && db.type === 'sqlite' });
}

export { INVALIDATION_POLL_MS };
