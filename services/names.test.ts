/**
 * The service names have one home (issue 35 §1): services/registry.ts, and the lists `npm run generate`
 * derives from it (libs/contracts/src/gen/service-names.ts). This test fails when any other source file
 * spells out a list of service names (three or more of them as string literals in one array or union),
 * so that adding a service is its folder, its proto and one registry line, not a hunt for copies.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NAMES } from '@gatehouse/contracts/service-names';
import { serviceNamesSource } from '../scripts/generate-contracts.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where the names may be written: the registry, the generated lists, and this test's own fixtures. */
const ALLOWED = new Set(['services/registry.ts', 'libs/contracts/src/gen/service-names.ts', 'services/names.test.ts']);
const SKIP_DIRS = new Set(['node_modules', '.tools', '.ci', 'dist', 'coverage', '.git', 'gen']);

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : sources(rel);
    return /\.(ts|mjs|js)$/.test(e.name) ? [rel] : [];
  });
}

/**
 * Runs of string literals that name three or more different services, in one array literal or
 * type union: `['authn', 'mfa', 'admin']`, `'authn' | 'mfa' | 'orgs'`. A flag's `commands: [...]` in
 * libs/config's registry is not one: it says which processes take that flag.
 */
export function nameLists(text: string): string[] {
  const names = new Set<string>(SERVICE_NAMES);
  const found: string[] = [];
  // a run of quoted words separated only by commas, pipes and whitespace
  for (const m of text.matchAll(/(['"])[a-z.]+\1(?:\s*[,|]\s*(['"])[a-z.]+\2)+/g)) {
    if (/commands:\s*\[\s*$/.test(text.slice(Math.max(0, m.index - 20), m.index))) continue;
    const words = [...m[0].matchAll(/['"]([a-z.]+)['"]/g)].map((w) => w[1]!.replace(/\.internal$/, ''));
    if (new Set(words.filter((w) => names.has(w))).size >= 3) found.push(m[0]);
  }
  return found;
}

describe('service names live in services/registry.ts and the generated lists only', () => {
  it('finds the lists it is meant to find', () => {
    expect(nameLists("const A = ['authn', 'mfa', 'admin'];")).toHaveLength(1);
    expect(nameLists("type S = 'authn' | 'mfa' | 'orgs';")).toHaveLength(1);
    expect(nameLists("calls: ['authn.internal', 'authz.internal']")).toEqual([]);
    expect(nameLists("flag: '--x', commands: ['all', 'authn', 'mfa', 'orgs'], help: ''")).toEqual([]);
  });

  it('no other source file spells out a list of service names', () => {
    const offenders = ['bin', 'libs', 'services', 'gateway', 'scripts', 'test', 'apps']
      .flatMap(sources)
      .filter((f) => !ALLOWED.has(f))
      .flatMap((f) => nameLists(readFileSync(path.join(ROOT, f), 'utf8')).map((list) => `${f}: ${list}`));
    expect(offenders).toEqual([]);
  });

  it('the generated lists are fresh (run `npm run generate` after changing services/registry.ts)', () => {
    expect(readFileSync(path.join(ROOT, 'libs/contracts/src/gen/service-names.ts'), 'utf8')).toBe(serviceNamesSource());
  });
});
