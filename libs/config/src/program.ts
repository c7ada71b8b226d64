/** @module @gatehouse/config/program: builds the commander program of one command from the registry (STYLE §5). */

import { Command, Option } from 'commander';
import { COMMAND_SUMMARY } from './commands.ts';
import type { CommandName } from './commands.ts';
import { FlagValueError, pem } from './parsers.ts';
import { flagName, registryEntries } from './registry.ts';
import type { FlagKey } from './registry.ts';

/** Marks a value whose parser refused it; the message went to the error sink. */
export const INVALID: unique symbol = Symbol('invalid flag value');

/** How a default reads in help: lists comma-joined (`none` when empty), strings quoted. */
export function showDefault(value: unknown): string {
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(',');
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/**
 * A fresh commander `Command` for `command`, with one `Option` per flag the command accepts
 * (no `.env()`: flags are the only source). Parse errors are pushed to `sink` instead of thrown,
 * so that every problem is reported at once (behaviour.md §1.4).
 */
export function buildProgram(command: CommandName, sink: string[] = []): Command {
  const program = new Command(`gatehouse ${command}`)
    .description(COMMAND_SUMMARY[command])
    .helpOption('-h, --help', 'show this help and exit')
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({
      writeOut: () => {},
      writeErr: () => {},
      getOutHelpWidth: () => 110,
      getErrHelpWidth: () => 110,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
  for (const [, spec] of registryEntries()) {
    if (!spec.commands.includes(command)) continue;
    const name = flagName(spec);
    const boolean = spec.parser.type === 'boolean';
    const option = new Option(boolean ? `${spec.flag} [true|false]` : spec.flag, spec.secret ? `${spec.help} (secret; or file:/path to read it from a file)` : spec.parser === pem ? `${spec.help} (or file:/path to read it from a file)` : spec.help)
      .helpGroup(`${spec.group}:`)
      .argParser((raw: string) => {
        try {
          return spec.parser.parse(raw, name);
        } catch (e) {
          if (!(e instanceof FlagValueError)) throw e;
          sink.push(...e.messages);
          return INVALID;
        }
      });
    // Secrets never show (or have) a default.
    if (spec.default !== undefined && !spec.secret) option.default(spec.default, showDefault(spec.default));
    program.addOption(option);
  }
  return program;
}

/**
 * Parses canonical tokens (from scanArgv) with commander.
 * @returns option values keyed by registry key (INVALID for refused values) and commander's own errors
 */
export function runProgram(
  command: CommandName,
  tokens: readonly string[],
): { opts: Partial<Record<FlagKey, unknown>>; errors: string[] } {
  const errors: string[] = [];
  const program = buildProgram(command, errors);
  try {
    program.parse([...tokens], { from: 'user' });
  } catch (e) {
    // exitOverride turns commander's exits into CommanderError; its text starts with "error: ".
    errors.push(e instanceof Error ? e.message.replace(/^error: /, '') : String(e));
  }
  return { opts: program.opts() as Partial<Record<FlagKey, unknown>>, errors };
}
