/**
 * @module test/e2e/startup
 * Startup rules through the real binary (spec §1 "Startup configuration", behaviour.md §1.4): each
 * fatal rule prints `FATAL: <message>` on stderr and exits 1 before binding; deprecated underscore
 * aliases warn and still start; `--help` lists the flags of the spec tables.
 */
import { describe, it, expect, afterAll, jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createScratchDatabase } from '@gatehouse/db';
import { freePort, runGatehouse, spawnGatehouse, waitForHttp, type GatehouseProcess } from '@gatehouse/testing';

jest.setTimeout(60_000);

const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-startup-'));
const running: GatehouseProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** A complete, valid `gatehouse all` configuration; `drop` removes flags by name, `extra` is appended. */
async function config(drop: string[] = [], extra: string[] = []): Promise<{ flags: string[]; httpPort: number }> {
  const [http, grpc, metrics] = [await freePort(), await freePort(), await freePort()];
  const base = [
    '--host=127.0.0.1', `--url=http://127.0.0.1:${http}`, '--app-cookie-secure=false',
    '--admin-secret=an-admin-secret-of-at-least-32-characters', '--client-id=startup-client', '--client-secret=startup-secret',
    '--database-type=sqlite', `--database-url=${path.join(dir, `${http}.db`)}`, '--jwt-type=HS256', '--jwt-secret=startup-jwt-secret-of-at-least-32-bytes',
    `--http-port=${http}`, `--grpc-port=${grpc}`, `--metrics-port=${metrics}`,
  ];
  return { flags: [...base.filter((f) => !drop.includes(f.split('=')[0]!)), ...extra], httpPort: http };
}

/** Runs the binary and asserts exit status 1 with each `FATAL:` line on stderr. */
async function expectFatal(flags: string[], ...messages: string[]): Promise<string> {
  const r = await runGatehouse('all', flags, 30_000);
  for (const m of messages) expect(r.stderr.split('\n')).toContain(`FATAL: ${m}`);
  expect(r.code).toBe(1);
  return r.stderr;
}

describe('fatal startup rules (behaviour.md §1.4)', () => {
  it('an empty, blank or missing --admin-secret', async () => {
    const msg = '--admin-secret is required and must not be empty';
    await Promise.all([
      expectFatal((await config(['--admin-secret'], ['--admin-secret='])).flags, msg),
      expectFatal((await config(['--admin-secret'], ['--admin-secret=   '])).flags, msg),
      expectFatal((await config(['--admin-secret'])).flags, msg),
    ]);
  });

  it('--http-port equal to --metrics-port (and to --grpc-port)', async () => {
    const port = await freePort();
    await Promise.all([expectFatal((await config(['--http-port', '--metrics-port'], [`--http-port=${port}`, `--metrics-port=${port}`])).flags,
      `--http-port (${port}) and --metrics-port (${port}) must differ`),
    expectFatal((await config(['--http-port', '--grpc-port'], [`--http-port=${port}`, `--grpc-port=${port}`])).flags,
      `--http-port (${port}) and --grpc-port (${port}) must differ`)]);
  });

  it('missing --client-id and --client-secret', async () => {
    await Promise.all([
      expectFatal((await config(['--client-id'])).flags, '--client-id is required'),
      expectFatal((await config(['--client-secret'])).flags, '--client-secret is required'),
    ]);
  });

  it('missing or unknown --database-type, and no connection', async () => {
    await Promise.all([
      expectFatal((await config(['--database-type'])).flags, '--database-type is required'),
      expectFatal((await config(['--database-type'], ['--database-type=couchbase'])).flags, 'unsupported --database-type: couchbase'),
      expectFatal((await config(['--database-url'])).flags,
        'a database connection is required: set --database-url, or --database-host with --database-name'),
    ]);
  });

  it('a removed MFA flag names its replacement', async () => {
    await Promise.all([
      expectFatal((await config([], ['--enable-mfa=true'])).flags,
        'unknown flag --enable-mfa: removed; MFA methods are on by default, use --disable-mfa or --disable-<method>'),
      expectFatal((await config([], ['--enable-totp-login'])).flags,
        'unknown flag --enable-totp-login: removed; MFA methods are on by default, use --disable-mfa or --disable-<method>'),
    ]);
  });

  it('--env_file is refused', async () => {
    await expectFatal((await config([], ['--env_file=.env'])).flags, '--env_file is not supported; pass configuration as flags');
  });

  it('reports every failing rule, not only the first, and binds nothing', async () => {
    const { flags, httpPort } = await config(['--admin-secret', '--client-id', '--jwt-type']);
    await expectFatal(flags, '--admin-secret is required and must not be empty', '--client-id is required', '--jwt-type is required');
    await expect(fetch(`http://127.0.0.1:${httpPort}/healthz`)).rejects.toThrow();
  });
});

describe('start-up errors name the flag, the address and the cause (issue 15 item 7)', () => {
  it('a mistyped PostgreSQL database name is refused, not created; --database-create creates it', async () => {
    // a scratch database dropped at once: a name that does not exist, and its drop() for afterwards
    const scratch = await createScratchDatabase('postgres');
    await scratch.drop();
    const name = new URL(scratch.options.url!).pathname.slice(1);
    const flags = (await config(['--database-type', '--database-url'], ['--database-type=postgres', `--database-url=postgres://postgres@127.0.0.1:5432/${name}`])).flags;
    await expectFatal(flags,
      `cannot connect to the database: cannot connect to postgres at 127.0.0.1:5432/${name}: database "${name}" does not exist (check the name, or pass --database-create to create it)`);
    const created = spawnGatehouse('all', [...flags, '--database-create']);
    running.push(created);
    try {
      await waitForHttp(`http://127.0.0.1:${flags.find((f) => f.startsWith('--http-port='))!.split('=')[1]}/readyz`, 45_000, created.alive);
    } finally {
      await created.stop();
      await scratch.drop();
    }
  });

  it('an unreachable database names host:port and the cause', async () => {
    const port = await freePort();
    await expectFatal((await config(['--database-type', '--database-url'], ['--database-type=postgres', `--database-url=postgres://postgres@127.0.0.1:${port}/gatehouse`])).flags,
      `cannot connect to the database: cannot connect to postgres at 127.0.0.1:${port}/gatehouse: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('an unreachable NATS is a NATS error, not a database one', async () => {
    const port = await freePort();
    const stderr = await runGatehouse('all', [...(await config()).flags, `--nats-url=nats://127.0.0.1:${port}`], 30_000);
    expect(stderr.code).toBe(1);
    expect(stderr.stderr).toMatch(new RegExp(`^FATAL: cannot connect to NATS \\(--nats-url\\): cannot use NATS JetStream at nats://127\\.0\\.0\\.1:${port}: `, 'm'));
    expect(stderr.stderr).not.toContain('cannot connect to the database');
  });

  it('a key flag given a file path says it takes the PEM text; a short HS256 secret is refused in production', async () => {
    await expectFatal((await config(['--jwt-type', '--jwt-secret'], ['--jwt-type=RS256', '--jwt-private-key=/etc/keys/key.pem', '--jwt-public-key=/etc/keys/pub.pem'])).flags,
      '--jwt-private-key is not a valid PEM RSA private key: it takes the PEM text, or file: and the path (for example --jwt-private-key=file:/etc/keys/key.pem)');
    await expectFatal((await config(['--jwt-secret'], ['--jwt-secret=too-short'])).flags,
      '--jwt-secret is 9 bytes; HS256 needs at least 32 (RFC 7518 §3.2): use a long random value (or --env=development to start anyway)');
  });
});

describe('warnings and help', () => {
  it('the deprecated --database_url alias warns and the server still starts', async () => {
    const { flags, httpPort } = await config(['--database-url'], [`--database_url=${path.join(dir, 'alias.db')}`]);
    const p = spawnGatehouse('all', flags);
    running.push(p);
    await waitForHttp(`http://127.0.0.1:${httpPort}/healthz`, 45_000, p.alive);
    expect(p.output()).toMatch(/--database_url is deprecated; use --database-url/);
    expect(p.output()).not.toContain('FATAL');
    const meta = await fetch(`http://127.0.0.1:${httpPort}/v1/meta`);
    expect(((await meta.json()) as { client_id: string }).client_id).toBe('startup-client');
    await p.stop();
    expect(await p.exited).not.toBeNull();
  });

  it('gatehouse --version prints the version and exits 0', async () => {
    const r = await runGatehouse('--version', [], 30_000);
    expect({ code: r.code, output: r.output.trim() }).toEqual({ code: 0, output: expect.stringMatching(/^gatehouse \d+\.\d+\.\d+$/) });
  });

  it('gatehouse all --help lists the flags of the spec tables', async () => {
    const r = await runGatehouse('all', ['--help'], 30_000);
    expect(r.code).toBe(0);
    for (const flag of [
      '--env', '--http-port', '--grpc-port', '--host', '--metrics-port', '--metrics-host', '--log-level', '--url',
      '--database-type', '--database-url', '--database-host', '--database-name', '--redis-url', '--client-id', '--client-secret',
      '--admin-secret', '--allowed-origins', '--enable-graphql-introspection', '--roles', '--default-roles', '--protected-roles',
      '--enable-strong-password', '--enable-signup', '--enforce-mfa', '--disable-mfa', '--disable-totp-login', '--disable-webauthn-mfa',
      '--app-cookie-secure', '--admin-cookie-secure', '--jwt-type', '--jwt-secret', '--jwt-private-key', '--jwt-role-claim',
      '--smtp-host', '--twilio-account-sid', '--google-client-id', '--microsoft-tenant-id', '--reset-password-url',
      '--disable-admin-header-auth', '--trusted-proxies', '--fga-store', '--fga-store-url', '--rate-limit-rps', '--rate-limit-burst',
    ]) {
      expect(r.output).toMatch(new RegExp(`^\\s+${flag.replace(/-/g, '\\-')}[ ,<=]`, 'm'));
    }
    // removed flags are not advertised
    expect(r.output).not.toMatch(/--enable-mfa\b/);
  });
});

describe("V8's young generation (issue 38 §5)", () => {
  /** The argument vector the running process has now (node's own flags included), from /proc/<pid>/cmdline. */
  const cmdlineOf = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

  it('a server started as `node bin/gatehouse.mjs all` runs with --max-semi-space-size=16, under the same process id', async () => {
    const { flags, httpPort } = await config();
    const p = spawnGatehouse('all', flags);
    running.push(p);
    await waitForHttp(`http://127.0.0.1:${httpPort}/healthz`, 150_000, p.alive);
    const argv = cmdlineOf(p.child.pid!);
    // node's own flags come before the script: V8 sized its heap with it
    expect(argv.slice(1, argv.findIndex((a) => a.endsWith('gatehouse.mjs')))).toContain('--max-semi-space-size=16');
    expect(argv.slice(-flags.length)).toEqual(flags);
    await p.stop();
  }, 180_000);

  it("an operator's --max-semi-space-size in NODE_OPTIONS is kept as given", async () => {
    const { flags, httpPort } = await config();
    const p = spawnGatehouse('all', flags, { NODE_OPTIONS: '--max-semi-space-size=32' });
    running.push(p);
    await waitForHttp(`http://127.0.0.1:${httpPort}/healthz`, 150_000, p.alive);
    expect(cmdlineOf(p.child.pid!).some((a) => a.startsWith('--max-semi-space-size'))).toBe(false);
    await p.stop();
  }, 180_000);
});
