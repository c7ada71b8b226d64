/** @module @gatehouse/config/test-fixtures: argv builders shared by this package's tests (not exported from index). */

import { SERVICE_ROUTES } from '@gatehouse/contracts/service-names';
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
/** The gateway's routing flags: a host per service (`authz-0` and `authz-1` for a replicated one). */
export const GATEWAY_ROUTES: readonly string[] = [
  ...SERVICE_ROUTES.map((r) => `--${r.name}-address=${hostsOf(r).map((h) => `${h}:9091`).join(',')}`),
  ...SERVICE_ROUTES.filter((r) => r.subgraph).map((r) => `--${r.name}-graphql-url=${hostsOf(r).map((h) => `http://${h}:8080/graphql`).join(',')}`),
];

function hostsOf(route: (typeof SERVICE_ROUTES)[number]): string[] {
  return route.replicated ? [`${route.name}-0`, `${route.name}-1`] : [route.name];
}

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
