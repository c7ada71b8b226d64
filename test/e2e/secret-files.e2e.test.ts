/**
 * @module test/e2e/secret-files
 * Secrets read from files (issue 37 §5): started with `--admin-secret=file:<path>` (and the client
 * secret, JWT secret and encryption key the same way, as the chart's Secret volume passes them), the
 * process reads each secret from its file at start-up, so none is in its argv, which any user of the
 * machine can read in /proc/<pid>/cmdline (`ps`). The admin API takes the secret from the file and
 * nothing else; a missing file stops start-up with a line naming the flag.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runGatehouse, startDeployment, type Deployment } from '@gatehouse/testing';

describe('secret flags given as file:<path>', () => {
  let d: Deployment;
  let argv: string[];

  beforeAll(async () => {
    d = await startDeployment('all', { secretFiles: true, readyTimeoutMs: 90_000 });
    argv = d.processes[0]!.child.spawnargs.slice(3);
  }, 120_000);

  afterAll(async () => {
    await d?.stop();
  });

  const readModel = (secret: string): Promise<Response> =>
    fetch(`${d.url}/v1/admin/fga/model`, { headers: { 'x-service-admin-secret': secret, origin: d.url } });

  it('keeps every secret out of the process list: /proc/<pid>/cmdline holds the paths only', () => {
    const cmdline = readFileSync(`/proc/${d.processes[0]!.child.pid!}/cmdline`, 'utf8').split('\0');
    expect(cmdline).toContain('all');
    const adminFlag = cmdline.filter((a) => a.startsWith('--admin-secret'));
    expect(adminFlag).toHaveLength(1);
    expect(adminFlag[0]).toMatch(/^--admin-secret=file:\/.+\/admin-secret$/);
    for (const flag of ['--client-secret', '--jwt-secret', '--encryption-key']) {
      expect(cmdline.find((a) => a.startsWith(`${flag}=`))).toMatch(/=file:\//);
    }
    const text = cmdline.join(' ');
    expect(text).not.toContain(d.adminSecret);
    expect(text).not.toContain(d.encryptionKey);
  });

  it('authenticates the admin with the secret read from the file (its trailing newline trimmed)', async () => {
    const file = argv.find((a) => a.startsWith('--admin-secret='))!.slice('--admin-secret=file:'.length);
    expect(readFileSync(file, 'utf8')).toBe(`${d.adminSecret}\n`);
    const res = await readModel(d.adminSecret);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '', dsl: '' });
  });

  it('refuses the file path itself as the secret', async () => {
    const res = await readModel(argv.find((a) => a.startsWith('--admin-secret='))!.slice('--admin-secret='.length));
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('unauthenticated');
  });

  it('stops start-up with a line naming the flag when the file is missing', async () => {
    const dir = path.dirname(argv.find((a) => a.startsWith('--admin-secret='))!.slice('--admin-secret=file:'.length));
    const missing = path.join(dir, 'absent');
    // (a loaded machine may take long to load the modules before the flags are read)
    const run = await runGatehouse('all', argv.map((a) => (a.startsWith('--admin-secret=') ? `--admin-secret=file:${missing}` : a)), 90_000);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`FATAL: --admin-secret: cannot read the secret file ${missing} (ENOENT)`);
    expect(run.output).not.toContain(d.adminSecret);
  }, 120_000);
});
