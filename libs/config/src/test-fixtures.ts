/** @module @gatehouse/config/test-fixtures: argv builders shared by this package's tests (not exported from index). */

import type { CommandName } from './commands.ts';
import { loadConfig } from './load.ts';
import type { Config, ConfigResult } from './load.ts';

/** The flags every command needs, plus a database and an HS256 key: a valid production start. */
export const BASE: readonly string[] = [
  '--admin-secret=0123456789abcdef0123456789abcdef',
  '--client-id=gatehouse',
  '--client-secret=client-secret',
  '--url=https://auth.example.com',
  '--allowed-origins=https://app.example.com',
];
export const DB: readonly string[] = ['--database-type=sqlite', '--database-url=/tmp/gatehouse.db'];
export const JWT: readonly string[] = ['--jwt-type=HS256', '--jwt-secret=jwt-secret-of-32-bytes-or-longer!'];
export const GATEWAY_ROUTES: readonly string[] = [
  '--authn-address=authn:9091', '--mfa-address=mfa:9091', '--admin-address=admin:9091', '--orgs-address=orgs:9091',
  '--authz-address=authz-0:9091,authz-1:9091',
  '--authn-graphql-url=http://authn:8080/graphql', '--mfa-graphql-url=http://mfa:8080/graphql',
  '--admin-graphql-url=http://admin:8080/graphql', '--orgs-graphql-url=http://orgs:8080/graphql',
  '--authz-graphql-url=http://authz-0:8080/graphql,http://authz-1:8080/graphql',
];

/** A complete valid argv for `command`, followed by `extra` (later flags win). */
export function argvFor(command: CommandName, ...extra: string[]): string[] {
  // the notifications worker serves no API: no client id or admin secret; its --client-secret derives
  // the internal token of its calls to admin (webhook targets, stored templates)
  const parts = command === 'notifications' ? BASE.filter((f) => !/^--(admin-secret|client-id)=/.test(f)) : [...BASE];
  if (command !== 'gateway') parts.push(...DB);
  if (command !== 'gateway' && command !== 'notifications') parts.push(...JWT);
  if (command === 'gateway') parts.push(...GATEWAY_ROUTES);
  return [...parts, ...extra];
}

/** Loads `all` with the valid base plus `extra`. */
export function load(...extra: string[]): ConfigResult {
  return loadConfig('all', argvFor('all', ...extra));
}

/** Loads and fails the test with the errors when there is no config. */
export function ok(command: CommandName, ...extra: string[]): Config {
  const result = loadConfig(command, argvFor(command, ...extra));
  if (result.config === undefined) throw new Error(`expected a config, got errors: ${result.errors.join(' | ')}`);
  return result.config;
}
