/**
 * @module scripts/gen-chart-flags
 * Writes charts/gatehouse/files/flags.json from the flag registry (`listFlags`, STYLE §5): every flag
 * by its Config key (kebab name, type, secret) and, per command, the keys that command accepts. The
 * chart's templates read it (`.Files.Get` + `fromJson`) so a container only gets the flags its
 * command accepts (the binary refuses unknown flags) and secret flags only arrive via `$(VAR)`.
 *
 * Run: `npx node scripts/gen-chart-flags.ts` (writes the file) or `--check` (exit 1 when stale).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, listFlags } from '@gatehouse/config';

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

/** The file's shape: `flags` by Config key, `commands` → accepted keys (registry order). */
export interface ChartFlags {
  readonly generatedBy: string;
  readonly flags: Readonly<Record<string, ChartFlag>>;
  readonly commands: Readonly<Record<string, readonly string[]>>;
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
  return { generatedBy: 'scripts/gen-chart-flags.ts (npx node scripts/gen-chart-flags.ts); do not edit', flags, commands };
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
