/** @module @gatehouse/config/help: `--help` text and the registry as data for docs and Helm values (STYLE §5). */

import type { CommandName } from './commands.ts';
import type { FlagType } from './parsers.ts';
import { buildProgram } from './program.ts';
import { flagName, registryEntries } from './registry.ts';
import type { FlagKey } from './registry.ts';

/** One flag as documentation sees it. */
export interface FlagInfo {
  /** kebab name, e.g. `--http-port` */
  readonly flag: string;
  /** Config key, e.g. `httpPort` */
  readonly key: FlagKey;
  readonly type: FlagType;
  /** parsed default; absent for secrets and flags without one */
  readonly default?: unknown;
  readonly help: string;
  readonly secret: boolean;
  /** missing or empty is fatal */
  readonly required: boolean;
  /** help heading, e.g. `Database` */
  readonly group: string;
}

/** Every flag `command` accepts, in registry order. */
export function listFlags(command: CommandName): FlagInfo[] {
  return registryEntries()
    .filter(([, spec]) => spec.commands.includes(command))
    .map(([key, spec]) => ({
      flag: flagName(spec),
      key,
      type: spec.parser.type,
      ...(spec.default !== undefined && !spec.secret ? { default: spec.default } : {}),
      help: spec.help,
      secret: spec.secret === true,
      required: spec.required === true,
      group: spec.group,
    }));
}

const FOOTER = `
Configuration comes only from these flags: no environment variables, no .env file.
Both --flag=value and --flag value work. Booleans accept --flag, --flag=true, --flag=false.
An empty value (--flag=) means the default. Lists are comma-separated.
Every flag marked secret, and every <pem> flag, also takes file:/path: the value is read from that
file at start-up (trailing newline trimmed), so a secret never shows in the process list; a missing,
unreadable or empty file stops start-up.
`;

/** The `--help` text of one command: every flag it accepts, by group, with defaults (never for secrets). */
export function helpText(command: CommandName): string {
  return buildProgram(command).helpInformation() + FOOTER;
}
