/**
 * @module test/e2e/readme
 * The README's quickstart, run as written (issue 35 §3): the server is started the way `npm start`
 * starts it (`node bin/start-dev.ts`, on free ports and a fresh SQLite file), then every ```sh block
 * between the install block and "## Running it" runs in bash, in the order the README gives them, and
 * each block's answers are checked. Only the ports and the cookie jar's location are changed, so a
 * README command that stops working, or one added without an expectation here, fails this test.
 * It also holds `npm start`'s signing key: RS256, made once beside the database (mode 0600), served in
 * the JWKS and kept across a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, REPO_ROOT, waitForHttp } from '@gatehouse/testing';

/** What each quickstart block must print, in README order (every string must appear). */
const EXPECT: ReadonlyArray<{ starts: string; answers: readonly string[] }> = [
  { starts: 'curl -s -X POST localhost:8080/v1/signup', answers: ['"message":"Proceed to mfa setup"', '"message":"MFA setup skipped"', '"message":"Logged in successfully"', '"email":"ada@example.com"'] },
  { starts: 'curl -s -X POST localhost:8080/graphql', answers: ['"is_sign_up_enabled":true'] },
  { starts: '.tools/bin/grpcurl', answers: ['gatehouse.authn.v1.AuthnService', '"message": "Logged in successfully"'] },
  { starts: 'ADMIN=', answers: ['"allowed":true', '"allowed":false'] },
  { starts: 'ID_TOKEN=', answers: ['RS256 ada@example.com'] },
  // issue 33 §4: npm start's --env=development keeps the reset mail in the development outbox
  { starts: "ADMIN='x-service-admin-secret", answers: ['a password reset link has been sent', '"channel":"email"', '"to":"ada@example.com"', '/app/reset-password?token='] },
];

/** The ```sh blocks of the quickstart: after the first (install) block, before the first `## ` heading. */
function quickstartBlocks(readme: string): string[] {
  const head = readme.split(/^## /m)[0]!;
  const blocks = [...head.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks.slice(1);
}

/** Starts `npm start`'s program with the given flags; resolves once /readyz answers 200. */
async function startDev(flags: readonly string[], port: number): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/start-dev.ts'), ...flags], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  let running = true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => { running = false; resolve(); }));
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, 90_000, () => running).catch((err: Error) => { throw new Error(`${err.message}\n${out}`); });
  return {
    child,
    output: () => out,
    stop: async () => { if (running) { child.kill('SIGTERM'); await exited; } },
  };
}

describe('README quickstart against npm start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'contract-readme-'));
  const db = path.join(dir, 'readme.db');
  let http = 0;
  let grpc = 0;
  let flags: string[] = [];
  let server: Awaited<ReturnType<typeof startDev>> | undefined;

  beforeAll(async () => {
    http = await freePort();
    grpc = await freePort();
    flags = [`--http-port=${http}`, `--grpc-port=${grpc}`, `--metrics-port=${await freePort()}`, '--host=127.0.0.1', `--database-url=${db}`];
    server = await startDev(flags, http);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has exactly the quickstart blocks this test expects', () => {
    const blocks = quickstartBlocks(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
    expect(blocks.map((b) => b.trimStart().slice(0, 40))).toEqual(EXPECT.map((e) => expect.stringMatching(`^${e.starts.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)));
  });

  it('every quickstart block answers what the README promises', () => {
    const blocks = quickstartBlocks(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
    blocks.forEach((block, i) => {
      const script = block
        .replaceAll('localhost:8080', `localhost:${http}`)
        .replaceAll('localhost:9091', `localhost:${grpc}`)
        .replaceAll('cookies.txt', path.join(dir, 'cookies.txt'));
      const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });
      const out = `${run.stdout}${run.stderr}`;
      expect({ block: i + 1, status: run.status }).toEqual({ block: i + 1, status: 0 });
      for (const answer of EXPECT[i]!.answers) expect({ block: i + 1, out: out.includes(answer) ? answer : out }).toEqual({ block: i + 1, out: answer });
    });
  }, 300_000);

  it('npm start signs with an RS256 key kept beside the database (0600) and keeps it across a restart', async () => {
    const keyFile = path.join(dir, 'readme.jwt-key.pem');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const jwks = (await (await fetch(`http://127.0.0.1:${http}/.well-known/jwks.json`)).json()) as { keys: Array<{ kty: string; alg: string; kid: string }> };
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'RSA', alg: 'RS256' })]);
    const discovery = (await (await fetch(`http://127.0.0.1:${http}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.id_token_signing_alg_values_supported).toEqual(['RS256']);
    expect(discovery.jwks_uri).toBe(`http://localhost:${http}/.well-known/jwks.json`);
    const pem = readFileSync(keyFile, 'utf8');
    await server!.stop();
    server = await startDev(flags, http);
    expect(readFileSync(keyFile, 'utf8')).toBe(pem);
    const again = (await (await fetch(`http://127.0.0.1:${http}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
    expect(again.keys.map((k) => k.kid)).toEqual(jwks.keys.map((k) => k.kid));
    expect(server.output()).toContain('key read from');
  }, 150_000);
});
