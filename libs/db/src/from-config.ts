/**
 * @module @gatehouse/db/from-config
 * The main database's connection flags (spec §1 rule 1: `--database-type` with `--database-url`,
 * or the host/port/name/username/password parts, plus the TLS material) as DatabaseOptions.
 */
import type { Config } from '@gatehouse/config';
import type { DatabaseOptions, DatabaseType } from './types.ts';

/** Maps the `--database-*` flags to options for {@link openDatabase}; unset flags are omitted. */
export function databaseOptionsOf(config: Config): DatabaseOptions {
  return {
    type: config.databaseType as DatabaseType,
    ...(config.databaseUrl ? { url: config.databaseUrl } : {}),
    ...(config.databaseHost ? { host: config.databaseHost } : {}),
    ...(config.databasePort ? { port: config.databasePort } : {}),
    ...(config.databaseName ? { name: config.databaseName } : {}),
    ...(config.databaseUsername ? { username: config.databaseUsername } : {}),
    ...(config.databasePassword ? { password: config.databasePassword } : {}),
    ...(config.databaseCert ? { cert: config.databaseCert } : {}),
    ...(config.databaseCaCert ? { caCert: config.databaseCaCert } : {}),
    ...(config.databaseCertKey ? { certKey: config.databaseCertKey } : {}),
    ...(config.databaseCreate ? { create: true } : {}),
  };
}
