/** @module @gatehouse/config/argv: reads raw argv into canonical `--flag[=value]` tokens; catches removed, deprecated and unknown flags (behaviour.md §1.4). */

import type { CommandName } from './commands.ts';
import { flagName, registryEntries } from './registry.ts';
import type { FlagKey, FlagSpec, PlacedFlag } from './registry.ts';
import { pem } from './parsers.ts';
import { readTextFile, resolveSecretFile } from './secret-file.ts';
import type { ReadTextFile } from './secret-file.ts';

/** MFA flags that were replaced by the `--disable-*` opt-outs (spec §1 "MFA opt-outs"). */
const REMOVED = new Set(['--enable-mfa', '--enable-totp-login', '--enable-email-otp', '--enable-sms-otp']);
/** There is no env file (spec §1 rule 6); both spellings are refused with the same line. */
const ENV_FILE = new Set(['--env_file', '--env-file']);
/** Deprecated underscore names still accepted, with a warning (spec §1 rule 6). */
const ALIASES: ReadonlyMap<string, string> = new Map([
  ['--database_url', '--database-url'],
  ['--database_type', '--database-type'],
  ['--redis_url', '--redis-url'],
  ['--log_level', '--log-level'],
]);

const BY_NAME: ReadonlyMap<string, [FlagKey, PlacedFlag<FlagSpec<unknown>>]> = new Map(
  registryEntries().map(([key, spec]) => [flagName(spec), [key, spec]]),
);

/** The outcome of reading argv. */
export interface ArgvScan {
  /** `--help` or `-h` was given */
  readonly help: boolean;
  /** canonical tokens for commander: `--name=value` or a bare boolean `--name` */
  readonly tokens: readonly string[];
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

/** A token that is surely another flag, not a value (PEM values start with `-----`). */
function looksLikeFlag(token: string | undefined): boolean {
  return token !== undefined && ((token.startsWith('--') && token[2] !== '-') || token === '-h');
}

/**
 * Reads flags only (no positional arguments exist). Accepts `--flag=value` and `--flag value`;
 * booleans also bare `--flag` and `--flag true|false`. The last occurrence of a flag wins (a repeatable
 * flag, `--encryption-key`, joins its values with commas instead); an empty
 * value (`--flag=`) means "not given", so the default applies (Helm renders unset values that way).
 * A secret flag's value `file:/path` is replaced by the content of the file (see secret-file.ts), so
 * the secret never appears in the process list; a file that cannot be read is an error naming the flag.
 * A PEM flag (`--jwt-public-key`, `--database-ca-cert`, ...) takes `file:/path` the same way.
 *
 * @param argv flags as typed, without node and script (process.argv.slice(3))
 * @param read reads a `file:` secret; the real file system by default
 */
export function scanArgv(command: CommandName, argv: readonly string[], read: ReadTextFile = readTextFile): ArgvScan {
  const tokens: string[] = [];
  const errors: string[] = [];
  const warnings: string[] = [];
  let help = false;

  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i] as string;
    if (tok === '--help' || tok === '-h') {
      help = true;
      continue;
    }
    if (tok === '--') {
      for (const rest of argv.slice(i + 1)) errors.push(`unexpected argument "${rest}"`);
      break;
    }
    if (!tok.startsWith('-') || tok === '-') {
      errors.push(`unexpected argument "${tok}"`);
      continue;
    }
    const eq = tok.indexOf('=');
    let name = eq >= 0 ? tok.slice(0, eq) : tok;
    let value = eq >= 0 ? tok.slice(eq + 1) : undefined;
    // A refused flag may have been written `--flag value`: swallow the value so it is not reported twice.
    const swallowValue = (): void => {
      const next = argv[i + 1];
      if (value === undefined && next !== undefined && !next.startsWith('-')) i++;
    };

    if (REMOVED.has(name)) {
      errors.push(`unknown flag ${name}: removed; MFA methods are on by default, use --disable-mfa or --disable-<method>`);
      swallowValue();
      continue;
    }
    if (ENV_FILE.has(name)) {
      errors.push('--env_file is not supported; pass configuration as flags');
      swallowValue();
      continue;
    }
    const canonical = ALIASES.get(name);
    if (canonical !== undefined) {
      const warning = `${name} is deprecated; use ${canonical}`;
      if (!warnings.includes(warning)) warnings.push(warning);
      name = canonical;
    }
    const entry = BY_NAME.get(name);
    if (entry === undefined) {
      errors.push(`unknown flag ${name}`);
      swallowValue();
      continue;
    }
    const [, spec] = entry;
    if (!spec.commands.includes(command)) {
      errors.push(`unknown flag ${name}: the ${command} command does not use it`);
      swallowValue();
      continue;
    }
    if (spec.parser.type === 'boolean') {
      const next = argv[i + 1];
      if (value === undefined && next !== undefined && !next.startsWith('-')) {
        value = next;
        i++;
      }
    } else if (value === undefined) {
      const next = argv[i + 1];
      if (next === undefined || looksLikeFlag(next)) {
        errors.push(`${name} requires a value`);
        continue;
      }
      value = next;
      i++;
    }
    // secrets, and PEM documents (keys and certificates are multi-line files): `file:/path` reads the file
    if ((spec.secret || spec.parser === pem) && value !== undefined) {
      const resolved = resolveSecretFile(name, value, read, spec.secret ? 'secret file' : 'file');
      if ('error' in resolved) {
        errors.push(resolved.error);
        continue;
      }
      value = resolved.value;
    }
    // A repeatable flag (a key ring) joins its values in order: `--k=a --k=b` is `--k=a,b`.
    if (spec.repeatable && value !== undefined && value.trim() !== '') {
      const at = tokens.findIndex((prev) => prev.startsWith(`${name}=`));
      if (at >= 0) {
        tokens[at] = `${tokens[at]},${value}`;
        continue;
      }
    }
    // Last one wins; an empty value also clears what came before, leaving the flag unset.
    for (let t = tokens.length - 1; t >= 0; t--) {
      const prev = tokens[t] as string;
      if (prev === name || prev.startsWith(`${name}=`)) tokens.splice(t, 1);
    }
    if (value !== undefined && value.trim() === '') continue;
    tokens.push(value === undefined ? name : `${name}=${value}`);
  }
  return { help, tokens, errors, warnings };
}
