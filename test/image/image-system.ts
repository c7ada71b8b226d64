/**
 * `npm run test:image`: the container image, for real (issue 37 §1). A system test run on demand, not
 * part of `npm test` (it needs podman and builds the image: minutes cold, about a minute warm).
 *
 * 1. builds the image with scripts/build-image.sh (the base image made locally when none can be pulled);
 * 2. checks the image's configuration: USER node, a HEALTHCHECK, the `node bin/gatehouse.mjs` entrypoint;
 * 3. runs `gatehouse all` on SQLite with a read-only root filesystem (`--read-only`, a tmpfs /tmp, the
 *    database on a volume), published on a loopback port, and asserts: /healthz answers 200, a sign-up
 *    over REST answers 200 with the TOTP enrolment (MFA is on by default), the process runs as uid 1000, nothing under /app can be
 *    written, and the image's HEALTHCHECK passes (`podman healthcheck run`) with a non-default --http-port;
 * 4. starts a second container on the same volume: the user's password is accepted and a wrong one is not,
 *    so the data outlived the container;
 * 5. runs `--version` and every command's `--help` in the same image.
 * Prints each step and the total duration; exits 1 on the first failed assertion, with the container's log.
 *
 * Usage: `npm run test:image` (`node test/image/image-system.ts`; `--no-build` reuses the built image).
 * Environment: CONTAINERS_CONF (default scripts/podman/containers.conf).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '@gatehouse/config/commands';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// eslint-disable-next-line no-restricted-properties -- podman's configuration for the podman children; Gatehouse reads none
process.env.CONTAINERS_CONF ??= path.join(ROOT, 'scripts/podman/containers.conf');
const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
const IMAGE = `localhost/gatehouse:${version}`;
const PASSWORD = 'Correct-Horse-9';
const started = Date.now();

function step(text: string): void {
  process.stdout.write(`[test:image ${((Date.now() - started) / 1000).toFixed(1)} s] ${text}\n`);
}

/** Runs podman; returns stdout. Throws (with stderr) on a non-zero exit unless `allowFail`. */
function podman(args: string[], allowFail = false): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('podman', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const out = { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  if (!allowFail && out.status !== 0) throw new Error(`podman ${args.join(' ')} exited ${out.status}: ${out.stderr}`);
  return out;
}

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 200; fails when `deadlineMs` passes or the container stops. */
async function waitHealthy(url: string, container: string, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
    } catch { /* not listening yet */ }
    const state = podman(['inspect', '--format', '{{.State.Status}}', container], true).stdout.trim();
    if (state !== 'running') throw new Error(`container ${container} is ${state || 'gone'} before ${url} answered`);
    if (Date.now() > until) throw new Error(`${url} did not answer 200 within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function postJson(url: string, body: unknown, origin: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const containers: string[] = [];
let dataDir = '';

/** `gatehouse all` on SQLite in a read-only container; returns the container name. */
function runAll(port: number, secrets: Record<string, string>): string {
  const name = `gatehouse-image-test-${randomBytes(4).toString('hex')}`;
  containers.push(name);
  podman(['run', '--detach', '--name', name, '--read-only', '--tmpfs', '/tmp', '--volume', `${dataDir}:/data`,
    '--publish', `127.0.0.1:${port}:8090`, IMAGE, 'all',
    '--http-port=8090', '--grpc-port=9095', '--metrics-port=9096', `--url=http://127.0.0.1:${port}`,
    `--admin-secret=${secrets.admin}`, '--client-id=gatehouse', `--client-secret=${secrets.client}`,
    '--database-type=sqlite', '--database-url=/data/gatehouse.db', '--jwt-type=HS256', `--jwt-secret=${secrets.jwt}`,
    `--encryption-key=${secrets.encryption}`, '--app-cookie-secure=false', '--log-level=warn']);
  return name;
}

async function main(): Promise<void> {
  if (!process.argv.includes('--no-build')) {
    step('bash scripts/build-image.sh');
    execFileSync('bash', [path.join(ROOT, 'scripts/build-image.sh')], { stdio: 'inherit' });
  }

  step(`image configuration of ${IMAGE}`);
  const [config] = JSON.parse(podman(['image', 'inspect', IMAGE]).stdout) as Array<{
    Config: { User?: string; Entrypoint?: string[] }; Healthcheck?: { Test?: string[] }; Size: number;
  }>;
  assert.ok(config, `podman image inspect ${IMAGE}`);
  assert.equal(config.Config.User, 'node', 'the image runs as the node user');
  // the Dockerfile's own ENTRYPOINT line (its exec form is JSON), so the image is checked against its source
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
  assert.ok(entrypoint, 'the Dockerfile has an exec-form ENTRYPOINT');
  assert.deepEqual(config.Config.Entrypoint, JSON.parse(entrypoint), 'the image runs the Dockerfile\'s ENTRYPOINT');
  assert.equal(config.Config.Entrypoint?.at(-1), 'bin/gatehouse.mjs');
  assert.deepEqual(config.Healthcheck?.Test, ['CMD', 'node', 'bin/healthcheck.mjs'], 'the image carries its HEALTHCHECK (Docker format)');
  step(`size ${(config.Size / 1e6).toFixed(0)} MB`);

  dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-image-data-'));
  // the container's node user (uid 1000) owns the database directory; rootless podman maps it
  if (process.getuid?.() === 0) chownSync(dataDir, 1000, 1000);
  else podman(['unshare', 'chown', '1000:1000', dataDir]);

  const secrets = { admin: randomBytes(24).toString('hex'), client: randomBytes(24).toString('hex'), jwt: randomBytes(32).toString('hex'), encryption: randomBytes(32).toString('hex') };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  step(`podman run --read-only ${IMAGE} all (SQLite on a volume) on ${base}`);
  const first = runAll(port, secrets);
  await waitHealthy(`${base}/healthz`, first, 90_000);
  step('/healthz 200');

  const email = `image-${randomBytes(4).toString('hex')}@example.com`;
  const signup = await postJson(`${base}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, base);
  assert.equal(signup.status, 200, `sign-up: ${JSON.stringify(signup.body)}`);
  // MFA is on by default: the sign-up answers with the TOTP enrolment (secret and QR code as a PNG),
  // which also shows that otplib and qrcode load from the image's production dependencies
  assert.equal(signup.body.should_show_totp_screen, true, `sign-up offers TOTP setup: ${JSON.stringify(signup.body).slice(0, 300)}`);
  assert.match(String(signup.body.authenticator_secret), /^[A-Z2-7]{16,}$/);
  assert.match(String(signup.body.authenticator_scanner_image), /^iVBORw0KGgo/, 'the QR code is a PNG');
  step(`sign-up of ${email}: 200 with the TOTP enrolment (secret, PNG QR code)`);

  const uid = podman(['exec', first, 'id', '-u']).stdout.trim();
  assert.equal(uid, '1000', 'the process runs as uid 1000');
  const pid1 = podman(['exec', first, 'sh', '-c', 'stat -c %u /proc/1']).stdout.trim();
  assert.equal(pid1, '1000', 'PID 1 (gatehouse) belongs to uid 1000');
  const write = podman(['exec', first, 'touch', '/app/written'], true);
  assert.notEqual(write.status, 0, 'the root filesystem is read-only');
  assert.match(write.stderr, /Read-only file system/);
  step('runs as uid 1000; /app is read-only');

  const health = podman(['healthcheck', 'run', first], true);
  assert.equal(health.status, 0, `HEALTHCHECK (bin/healthcheck.mjs on --http-port=8090): ${health.stdout}${health.stderr}`);
  step('podman healthcheck run: healthy');

  podman(['rm', '--force', '--time', '10', first]);
  const second = runAll(port, secrets);
  await waitHealthy(`${base}/healthz`, second, 90_000);
  const wrong = await postJson(`${base}/v1/login`, { email, password: `${PASSWORD}-wrong` }, base);
  assert.notEqual(wrong.status, 200, 'a wrong password is refused');
  const login = await postJson(`${base}/v1/login`, { email, password: PASSWORD }, base);
  assert.equal(login.status, 200, `login after a new container on the same volume: ${JSON.stringify(login.body).slice(0, 300)}`);
  step(`a new container on the same volume: the user's password is accepted (200), a wrong one refused (${wrong.status})`);
  podman(['rm', '--force', '--time', '10', second]);

  const shown = podman(['run', '--rm', '--read-only', IMAGE, '--version']).stdout.trim();
  assert.equal(shown, `gatehouse ${version}`);
  for (const command of [...COMMANDS, 'reseal']) {
    const r = podman(['run', '--rm', '--read-only', IMAGE, command, '--help'], true);
    assert.equal(r.status, 0, `${command} --help exited ${r.status}: ${r.stderr}`);
    assert.match(r.stdout, /--http-port|--database-url/, `${command} --help lists its flags`);
  }
  step(`--version and --help of ${[...COMMANDS, 'reseal'].join(', ')}: exit 0`);
}

try {
  await main();
  step(`PASSED in ${((Date.now() - started) / 1000).toFixed(1)} s`);
} catch (err) {
  for (const name of containers) {
    const logs = podman(['logs', '--tail', '40', name], true);
    if (logs.status === 0) process.stderr.write(`--- podman logs ${name} ---\n${logs.stdout}${logs.stderr}\n`);
  }
  process.stderr.write(`[test:image] FAILED after ${((Date.now() - started) / 1000).toFixed(1)} s: ${(err as Error).stack}\n`);
  process.exitCode = 1;
} finally {
  for (const name of containers) podman(['rm', '--force', '--time', '5', name], true);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
