/**
 * @module proto/buf.test
 * proto/ passes `buf lint` with the rules of buf.yaml (STYLE §10). The breaking-change check against
 * main runs in scripts/proto-check.sh, where a `main` ref exists.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The buf CLI of the @bufbuild/buf dev dependency (what `npx buf` runs). */
const BUF = createRequire(import.meta.url).resolve('@bufbuild/buf/bin/buf');

describe('buf lint (STYLE §10)', () => {
  it('reports no lint errors in proto/', () => {
    const run = spawnSync(BUF, ['lint', '--error-format=text'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect({ status: run.status, errors: `${run.stdout}${run.stderr}`.trim().split('\n').filter(Boolean) }).toEqual({ status: 0, errors: [] });
  }, 90_000);
});
