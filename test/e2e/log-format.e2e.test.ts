/**
 * @module test/e2e/log-format
 * `--log-format=pretty` (issue 15 "Logs"): the process writes human-readable lines through pino-pretty
 * instead of JSON, with the same records (the access-log line of a request included); JSON stays the
 * default (test/e2e/logs.e2e.test.ts).
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';

describe('--log-format=pretty (all-in-one)', () => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment('all', { flags: ['--log-format=pretty', '--log-level=info'] });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('writes one readable line per record, no JSON lines, the access log included', async () => {
    expect((await fetch(`${d.url}/v1/meta`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const lines = d.output().split('\n').filter((l) => l.trim() !== '');
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(lines.some((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request \{.*"route":"\/v1\/meta".*"status":200/.test(l))).toBe(true);
    expect(lines.some((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Gatehouse is serving http:\/\/127\.0\.0\.1:\d+ \{/.test(l))).toBe(true);
  });
});
