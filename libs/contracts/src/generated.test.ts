/**
 * The generated TypeScript in gen/ is what `npm run generate` makes from proto/ today: a proto change
 * without regenerated types fails here (issue 14 §1: "a test fails when it is stale").
 */
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateContracts } from '../../../scripts/generate-contracts.ts';

const GEN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'gen');

function tree(dir: string, prefix = ''): Map<string, string> {
  const files = new Map<string, string>();
  for (const e of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = path.join(prefix, e.name);
    if (e.isDirectory()) for (const [k, v] of tree(dir, rel)) files.set(k, v);
    else files.set(rel, readFileSync(path.join(dir, rel), e.name.endsWith('.binpb') ? 'base64' : 'utf8'));
  }
  return files;
}

describe('libs/contracts/src/gen', () => {
  it('is exactly what `npm run generate` makes from proto/ (run it after changing a .proto file)', () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'gatehouse-contracts-'));
    try {
      const fresh = path.join(scratch, 'gen');
      generateContracts(fresh);
      const want = tree(fresh);
      const have = tree(GEN);
      expect([...have.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [file, text] of want) expect({ file, text: have.get(file) }).toEqual({ file, text });
      // the map of services is part of what is generated: every proto service is typed
      expect(want.get('services.ts')).toContain("'gatehouse.mfa.v1.MfaService': ");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
