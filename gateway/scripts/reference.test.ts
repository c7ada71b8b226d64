/**
 * docs/reference/ is generated (gateway/scripts/reference.ts) and must be fresh: a changed proto
 * comment, route, flag, event or error code without `npm run generate` fails here. The repository's
 * documents and the OpenAPI document explain in the project's own words: none cites a design document
 * the repository does not contain.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, listFlags } from '@gatehouse/config';
import { buildOpenApi, ROUTES } from '../src/routes/table.ts';
import { REFERENCE_DIR, ownWords, referenceFiles } from './reference.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Names of documents kept outside the repository, which nothing shipped may point a reader to. */
const OUTSIDE = /behaviou?r\.md|service-spec(\.md)?|graphql\.md|TOOLCHAIN(\.md)?|ARCHITECTURE(\.md)? §|\bspec §|\.\.\/shared/;

describe('docs/reference', () => {
  const files = referenceFiles();

  it('is what `npm run generate` writes (run it after changing a proto, a route, a flag or an error code)', () => {
    expect(readdirSync(path.join(ROOT, REFERENCE_DIR)).sort()).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files)) {
      expect({ name, text: readFileSync(path.join(ROOT, REFERENCE_DIR, name), 'utf8') }).toEqual({ name, text });
    }
  });

  it('describes every REST route, every flag and every error code', () => {
    for (const r of ROUTES) expect(files['operations.md']).toContain(`REST \`${r.method} ${r.path}\``);
    for (const c of COMMANDS) for (const f of listFlags(c)) expect(files['flags.md']).toContain(`| \`${f.flag}\` |`);
    expect(files['errors.md']).toContain('| `invalid_argument` | 400 | 3 |');
  });

  it('drops citations of documents outside the repository and keeps the standards\'', () => {
    expect(ownWords('the gate (behaviour.md §4.1 G0–G7) runs')).toBe('the gate runs');
    expect(ownWords('behaviour.md §5.3, spec §2. authn owns the record')).toBe('authn owns the record');
    expect(ownWords('SCIM `active` (§6.4 "Deprovision"): false')).toBe('SCIM `active`: false');
    expect(ownWords('errors per RFC 6749 §5.2 (401 invalid_client)')).toBe('errors per RFC 6749 §5.2 (401 invalid_client)');
  });
});

/** The README.md of each package folder (apps/, charts/, gateway/, libs/, services/, test/), as repository paths. */
function moduleReadmes(): string[] {
  const found: string[] = [];
  if (readdirSync(path.join(ROOT, 'gateway')).includes('README.md')) found.push('gateway/README.md');
  for (const group of ['apps', 'charts', 'libs', 'services', 'test']) {
    for (const dir of readdirSync(path.join(ROOT, group), { withFileTypes: true })) {
      if (dir.isDirectory() && readdirSync(path.join(ROOT, group, dir.name)).includes('README.md')) found.push(`${group}/${dir.name}/README.md`);
    }
  }
  return found;
}

describe('the repository\'s documents and /openapi.json cite nothing outside the repository', () => {
  it('README.md, docs/, the reference and every module\'s README', () => {
    const docs = ['README.md', ...readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
      ...readdirSync(path.join(ROOT, REFERENCE_DIR)).map((f) => `${REFERENCE_DIR}/${f}`), ...moduleReadmes()];
    expect(docs).toEqual(expect.arrayContaining(['services/authn/README.md', 'libs/db/README.md', 'charts/gatehouse/README.md']));
    for (const doc of docs) {
      const hits = readFileSync(path.join(ROOT, doc), 'utf8').split('\n').filter((l) => OUTSIDE.test(l));
      expect({ doc, hits }).toEqual({ doc, hits: [] });
    }
  });

  it('the OpenAPI document', () => {
    const text = JSON.stringify(buildOpenApi(ROUTES, { version: 'test', serverUrl: 'http://127.0.0.1' }));
    expect(text.match(OUTSIDE)).toBeNull();
    expect(text).toContain('docs/reference/');
  });
});
