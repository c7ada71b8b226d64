/**
 * @module @gatehouse/config
 * The one flag registry (STYLE §5): parses a command's flags, checks every startup rule of
 * behaviour.md §1.4, and returns a deeply frozen Config. Only `main.ts` calls it.
 */

export type { CommandName } from './commands.ts';
export { COMMAND_SUMMARY, COMMANDS } from './commands.ts';
export type { Config, ConfigIo, ConfigResult } from './load.ts';
export { loadConfig, loadConfigOrExit, parseConfigOrExit } from './load.ts';
export type { FlagInfo } from './help.ts';
export { helpText, listFlags } from './help.ts';
export { redactConfig } from './redact.ts';
export type { Derived, FgaState, MfaState } from './derive.ts';
export type { DatabaseType, FgaStore, FlagKey, FlagValues, SocialProvider } from './registry.ts';
export { registry, SOCIAL_PROVIDERS } from './registry.ts';
export type { FlagType, JwtType } from './parsers.ts';
export { VERSION } from './version.ts';
