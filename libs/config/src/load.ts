/** @module @gatehouse/config/load: argv → frozen Config, collecting every startup failure (behaviour.md §1.4). */

import { scanArgv } from './argv.ts';
import type { CommandName } from './commands.ts';
import { derive } from './derive.ts';
import type { Derived } from './derive.ts';
import { helpText } from './help.ts';
import { INVALID, runProgram } from './program.ts';
import { registryEntries } from './registry.ts';
import type { FlagKey, FlagValues } from './registry.ts';
import type { ReadTextFile } from './secret-file.ts';
import { fatalRules, warningRules } from './validate.ts';

/**
 * The loaded configuration: one key per flag (camelCase of the kebab name), plus derived fields.
 * Flags a command does not accept hold their default (or undefined). Deeply frozen.
 */
export interface Config extends Omit<FlagValues, 'url' | 'resetPasswordUrl' | 'smtpSenderName'>, Derived {
  readonly command: CommandName;
  /** `--url` without a trailing `/`; `http://localhost:<http-port>` under `--env=development` */
  readonly url: string;
  /** `--reset-password-url`, default `<url>/app/reset-password` */
  readonly resetPasswordUrl: string;
  /** `--smtp-sender-name`, default `--organization-name` */
  readonly smtpSenderName: string;
}

/** The outcome of {@link loadConfig}: a config when `errors` is empty, or `help` when `--help` was asked. */
export interface ConfigResult {
  readonly config?: Config;
  /** set when `--help`/`-h` was given: the text to print (then exit 0) */
  readonly help?: string;
  /** one line per failure, without the `FATAL: ` prefix */
  readonly errors: string[];
  readonly warnings: string[];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * Parses the flags of one command and checks every startup rule before anything binds.
 * Reads only `argv` (never process.env) and the files named by `file:/path` values of secret flags
 * (issue 37 §5); writes nothing.
 *
 * @param argv flags only, as typed (process.argv.slice(3) style); `--flag=value` and `--flag value`
 * @param options.readFile reads a `file:` secret (tests inject one); the real file system by default
 * @returns `{config, errors: [], warnings}` on success; `{errors, warnings}` with every failure;
 *   `{help, errors: [], warnings: []}` when `--help` or `-h` is present
 */
export function loadConfig(command: CommandName, argv: readonly string[], options: { readFile?: ReadTextFile } = {}): ConfigResult {
  const scan = scanArgv(command, argv, options.readFile);
  if (scan.help) return { help: helpText(command), errors: [], warnings: [] };
  const { opts, errors: parseErrors } = runProgram(command, scan.tokens);

  const invalid = new Set<FlagKey>();
  const raw: Record<string, unknown> = {};
  for (const [key, spec] of registryEntries()) {
    const value = spec.commands.includes(command) ? opts[key] : spec.default;
    if (value === INVALID) invalid.add(key);
    // A refused value falls back to its default so the other rules still run on typed values.
    raw[key] = value === INVALID ? spec.default : value;
  }
  // Derived defaults (behaviour.md §1.1, §1.3).
  if (raw.url === undefined && !invalid.has('url') && raw.env === 'development') raw.url = `http://localhost:${String(raw.httpPort)}`;
  if (raw.resetPasswordUrl === undefined && !invalid.has('resetPasswordUrl') && raw.url !== undefined) {
    raw.resetPasswordUrl = `${String(raw.url)}/app/reset-password`;
  }
  raw.smtpSenderName ??= raw.organizationName;

  const values = raw as unknown as FlagValues;
  const derived = derive(values, command);
  const input = { command, values, derived, invalid };
  const errors = [...scan.errors, ...parseErrors, ...fatalRules(input)];
  const warnings = [...scan.warnings, ...warningRules(input)];
  if (errors.length > 0) return { errors, warnings };
  const config = deepFreeze({ command, ...values, ...derived } as Config);
  return { config, errors: [], warnings };
}

/** Where {@link parseConfigOrExit} writes; injectable for tests. */
export interface ConfigIo {
  stderr(line: string): void;
  /** where `--help` goes; process.stdout when absent */
  stdout?(text: string): void;
  warn(msg: string): void;
  exit(code: number): never;
}

const processIo: ConfigIo = {
  stderr: (line) => void process.stderr.write(`${line}\n`),
  warn: (msg) => void process.stderr.write(`WARN: ${msg}\n`),
  exit: (code) => process.exit(code),
};

/**
 * For `main.ts` only: loads the config; prints each failure as `FATAL: <message>` on stderr and
 * exits 1 (behaviour.md §1.4); prints help to stdout and exits 0 on `--help`; logs warnings
 * through `io.warn` (the caller passes its logger's `warn`).
 */
export function parseConfigOrExit(command: CommandName, argv: readonly string[], io: ConfigIo = processIo): Config {
  const result = loadConfig(command, argv);
  if (result.help !== undefined) {
    if (io.stdout) io.stdout(result.help);
    else process.stdout.write(result.help);
    return io.exit(0);
  }
  for (const warning of result.warnings) io.warn(warning);
  if (result.config === undefined || result.errors.length > 0) {
    for (const error of result.errors) io.stderr(`FATAL: ${error}`);
    return io.exit(1);
  }
  return result.config;
}

/**
 * {@link parseConfigOrExit} for a process's main: the warnings come back instead of being printed,
 * for the caller to log through its JSON logger once it exists (issue 15: every line JSON; the
 * logger's level and format are flags, so it cannot exist before the flags are read).
 */
export function loadConfigOrExit(command: CommandName, argv: readonly string[]): { config: Config; warnings: readonly string[] } {
  const warnings: string[] = [];
  const config = parseConfigOrExit(command, argv, { ...processIo, warn: (msg) => { warnings.push(msg); } });
  return { config, warnings };
}
