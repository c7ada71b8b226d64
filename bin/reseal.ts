/**
 * @module bin/reseal
 * `gatehouse reseal [flags]` (issue 32): after a new key was put first in `--encryption-key`, seals
 * every value an older key of the ring sealed again under the first (TOTP secrets, SSO client secrets,
 * SAML IdP keys, and the links and codes of the delivery jobs waiting in authn's and mfa's outboxes), on
 * the database the flags name, and prints the counts as one JSON line. It takes the flags of `gatehouse
 * all` (pass the deployment's own); in split mode run it once per service database.
 * Exit status 0 when every value opened, 1 when some value no key of the ring opens (their key was
 * dropped: put it back and run again), 2 on bad flags.
 */
import { loadConfigOrExit } from '@gatehouse/config';
import { createLogger, type LogLevel } from '@gatehouse/observability';
import { SERVICES } from '../services/registry.ts';

/** Runs every registered service's reseal pass; resolves with the exit status. */
export async function runReseal(argv: readonly string[]): Promise<number> {
  const { config } = loadConfigOrExit('all', argv);
  const logger = createLogger(config.logLevel as LogLevel, undefined, config.logFormat);
  const counts: Record<string, Record<string, { resealed: number; unreadable: number }>> = {};
  for (const module of SERVICES) {
    if (module.reseal) counts[module.name] = await module.reseal(config, logger);
  }
  const unreadable = Object.values(counts).flatMap((c) => Object.values(c)).reduce((n, c) => n + c.unreadable, 0);
  process.stdout.write(`${JSON.stringify({ resealed: counts, unreadable })}\n`);
  return unreadable > 0 ? 1 : 0;
}
