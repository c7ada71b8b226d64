/** @module @gatehouse/config/commands: the CLI commands and the flag sets they share (ARCHITECTURE §5-6). */
import { COMMAND_NAMES, SERVICE_SUMMARIES, type CommandName } from '@gatehouse/contracts/service-names';

/**
 * One process per command in split mode; `all` runs every service and the gateway in one process.
 * Generated from services/registry.ts (`npm run generate`).
 */
export type { CommandName };

export const COMMANDS: readonly CommandName[] = Object.freeze([...COMMAND_NAMES]);

/** Every command. */
export const ALL: readonly CommandName[] = COMMANDS;
/** Commands that own data: every command except `gateway` (the gateway only routes). */
export const DATA: readonly CommandName[] = COMMANDS.filter((c) => c !== 'gateway');
/** Commands that sign or verify tokens: not `gateway`, not `notifications`. */
export const TOKENS: readonly CommandName[] = COMMANDS.filter((c) => c !== 'gateway' && c !== 'notifications');
/** Commands that check callers: every command except the `notifications` worker (no API, no caller; it calls admin with the internal token of `--client-secret`). */
export const CALLERS: readonly CommandName[] = COMMANDS.filter((c) => c !== 'notifications');
/** Split-mode routing: only the gateway is told where the services listen. */
export const GATEWAY: readonly CommandName[] = ['gateway'];

/**
 * One line per command for `--help`: `all` and `gateway` here, each service's from its module's `summary`
 * (generated into `SERVICE_SUMMARIES` by `npm run generate`, so a new service adds none here).
 */
export const COMMAND_SUMMARY: Readonly<Record<CommandName, string>> = Object.freeze({
  all: 'every service and the gateway in one process',
  gateway: 'REST /v1, GraphQL and gRPC entry point in split mode; routes to the services',
  ...SERVICE_SUMMARIES,
});
