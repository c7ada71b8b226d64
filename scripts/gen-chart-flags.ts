/**
 * @module scripts/gen-chart-flags
 * Writes charts/gatehouse/files/flags.json from the flag registry (`listFlags`, STYLE §5) and the
 * service registry (services/registry.ts, issue 14 §4): every flag by its Config key (kebab name,
 * type, secret); per command, the keys that command accepts; and the services: the chart's
 * components, those the gateway routes to, and the peers each calls. The chart's templates read it
 * (`.Files.Get` + `fromJson`) so a container only gets the flags its command accepts (the binary
 * refuses unknown flags), secret flags only arrive via `$(VAR)`, and a service added to the registry
 * gets its Deployment and Service without a template edit.
 *
 * Run: `npx node scripts/gen-chart-flags.ts` (writes the file) or `--check` (exit 1 when stale).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, listFlags } from '@gatehouse/config';
import { SERVICES } from '../services/registry.ts';

/** Where the chart expects the generated allow-lists. */
export const FLAGS_JSON = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../charts/gatehouse/files/flags.json');

/** One flag as the chart sees it. */
export interface ChartFlag {
  /** kebab name with dashes, e.g. `--http-port` */
  readonly flag: string;
  /** `string`, `number`, `boolean` or `list` (lists render comma-joined) */
  readonly type: string;
  /** must come from a Kubernetes Secret through `$(VAR)` expansion, never a plain arg */
  readonly secret: boolean;
}

/** The services as the chart deploys them (from services/registry.ts). */
export interface ChartServices {
  /** every Deployment + Service, the gateway first, then the registry's order */
  readonly components: readonly string[];
  /** the services the gateway routes to (a public API): `--<name>-address`, `--<name>-graphql-url` */
  readonly routed: readonly string[];
  /** service → the peers whose internal API it calls (`--<peer>-address`) */
  readonly calls: Readonly<Record<string, readonly string[]>>;
}

/** The file's shape: `flags` by Config key, `commands` → accepted keys (registry order), `services`. */
export interface ChartFlags {
  readonly generatedBy: string;
  readonly flags: Readonly<Record<string, ChartFlag>>;
  readonly commands: Readonly<Record<string, readonly string[]>>;
  readonly services: ChartServices;
}

/** The chart's view of the service registry; pure. */
export function chartServices(): ChartServices {
  return {
    components: ['gateway', ...SERVICES.map((m) => m.name)],
    routed: SERVICES.filter((m) => m.publicApi).map((m) => m.name),
    calls: Object.fromEntries(SERVICES.filter((m) => m.calls.length > 0).map((m) => [m.name, m.calls.map((api) => api.split('.')[0]!)])),
  };
}

/** Builds the allow-lists from the registry; pure. */
export function chartFlags(): ChartFlags {
  const flags: Record<string, ChartFlag> = {};
  const commands: Record<string, string[]> = {};
  for (const command of COMMANDS) {
    if (command === 'all') continue; // the chart runs split mode only
    const infos = listFlags(command);
    commands[command] = infos.map((f) => f.key);
    for (const f of infos) flags[f.key] = { flag: f.flag, type: f.type, secret: f.secret };
  }
  return { generatedBy: 'scripts/gen-chart-flags.ts (npx node scripts/gen-chart-flags.ts); do not edit', flags, commands, services: chartServices() };
}

/** The file's exact text (stable: 2-space JSON plus a trailing newline). */
export function chartFlagsText(): string {
  return `${JSON.stringify(chartFlags(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = chartFlagsText();
  if (process.argv.includes('--check')) {
    let current = '';
    try { current = readFileSync(FLAGS_JSON, 'utf8'); } catch { /* missing counts as stale */ }
    if (current !== text) {
      process.stderr.write(`${path.relative(process.cwd(), FLAGS_JSON)} is stale: run npx node scripts/gen-chart-flags.ts\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(FLAGS_JSON, text);
    process.stdout.write(`wrote ${path.relative(process.cwd(), FLAGS_JSON)}\n`);
  }
}
