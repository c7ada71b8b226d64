/** @module @gatehouse/config/redact: a loggable copy of the config, secrets replaced (STYLE §5-6). */

import type { Config } from './load.ts';
import { registryEntries } from './registry.ts';

/** Keys of every flag marked `secret: true` in the registry. */
const SECRET_KEYS: ReadonlySet<string> = new Set(registryEntries().filter(([, s]) => s.secret === true).map(([k]) => k));

/**
 * A shallow copy of `config` for a startup log line: every secret flag that is set reads
 * `[redacted]`, and so does `fga.url` (unset stays undefined, so the log still shows what is configured). The flag keys
 * are camelCase, which the snake_case redaction list of libs/observability would not catch.
 */
export function redactConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    out[key] = SECRET_KEYS.has(key) && value !== undefined ? '[redacted]' : value;
  }
  // The engine URL is a copy of --fga-store-url or --database-url, both secret (they carry credentials).
  out.fga = {
    ...config.fga,
    url: config.fga.url === undefined ? undefined : '[redacted]',
    ...(config.fga.apiToken === undefined ? {} : { apiToken: '[redacted]' }),
  };
  return out;
}
