/**
 * @module test/image/image.test
 * The container files' invariants, checked without podman or a network (the image itself is built and
 * run by `npm run test:image`, test/image/image-system.ts): the Dockerfile builds on the base that
 * scripts/build-image.sh makes, runs as `node` with a HEALTHCHECK; compose.yaml (split mode) runs every
 * command of the registry once, read-only, with arguments each command's own parser accepts, and wires
 * each `--<peer>-address` to the port that peer listens on; and every package the running code imports
 * is a root `dependency`, since the image installs those alone (`npm ci --omit=dev`).
 */
import { describe, it, expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig, registry, type CommandName } from '@gatehouse/config';
import { SERVICES as REGISTRY } from '../../services/registry.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

/** The Dockerfile's instructions (continuation lines joined, comments dropped), stage by stage. */
function stages(text: string): string[][] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const out: string[][] = [];
  for (const l of lines) {
    if (/^FROM\s/i.test(l)) out.push([]);
    out.at(-1)?.push(l);
  }
  return out;
}

/** `${NAME:-default}` → default, `${NAME:?message}` → a stand-in value, as compose would with NAME unset/set. */
function interpolate(arg: string): string {
  return arg.replace(/\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}/g, (_m, name: string, dflt: string | undefined) =>
    dflt ?? `${name.toLowerCase()}-0123456789abcdef0123456789abcdef`);
}

type ComposeService = { image: string; command: string[]; read_only?: boolean; network_mode?: string; tmpfs?: string[]; volumes?: string[]; depends_on?: string[] };
/** Where compose.yaml mounts its secrets directory, read-only; each secret flag names a file in it. */
const SECRETS = '/run/secrets/gatehouse';
/** Reads a `file:` secret of compose.yaml as the container would: a stand-in value per file of {@link SECRETS}. */
const composeSecret = (file: string): string => {
  if (!file.startsWith(`${SECRETS}/`)) throw Object.assign(new Error(`not in ${SECRETS}`), { code: 'ENOENT' });
  const name = file.slice(SECRETS.length + 1);
  return name === 'database-url' ? 'postgres://postgres@127.0.0.1:5432/gatehouse\n' : `${name}-0123456789abcdef0123456789abcdef\n`;
};
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };
const argv = (name: string): string[] => compose.services[name]!.command.slice(1).map(interpolate);
const flag = (args: readonly string[], name: string): string | undefined =>
  args.findLast((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);

describe('Dockerfile', () => {
  const all = stages(read('Dockerfile'));
  const final = all.at(-1)!;

  it('builds every stage on node:24-slim, the base scripts/build-image.sh makes when none can be pulled', () => {
    expect(all.map((s) => s[0]!.split(/\s+/)[1])).toEqual(all.map(() => 'node:24-slim'));
    expect(read('scripts/build-image.sh')).toContain('BASE=node:24-slim');
  });

  it('runs as the node user, with the gatehouse entrypoint and a HEALTHCHECK on /healthz', () => {
    const user = final.findIndex((l) => /^USER\s/i.test(l));
    expect(final[user]).toBe('USER node');
    // nothing after USER runs as root or adds files root would own
    expect(final.slice(user + 1).filter((l) => /^(RUN|COPY|ADD)\s/i.test(l))).toEqual([]);
    // the launcher's young-generation cap given on the entrypoint, so the launcher does not start itself again
    expect(final).toContain('ENTRYPOINT ["node", "--max-semi-space-size=16", "bin/gatehouse.mjs"]');
    expect(final.find((l) => l.startsWith('HEALTHCHECK'))).toMatch(/CMD \["node", "bin\/healthcheck\.mjs"\]$/);
    expect(read('bin/healthcheck.mjs')).toContain("path: '/healthz'");
  });

  it('keeps the health check script in the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    expect(ignored.filter((p) => p === 'bin' || p.startsWith('bin/') || p === '*.mjs')).toEqual([]);
  });
});

describe('compose.yaml (split mode)', () => {
  const commands = ['gateway', ...REGISTRY.map((m) => m.name)].sort();

  it('runs the gateway and every service of the registry, each once, from the image, read-only', () => {
    expect(Object.values(compose.services).map((s) => s.command[0]).sort()).toEqual(commands);
    for (const [name, s] of Object.entries(compose.services)) {
      expect({ name, command: s.command[0] }).toEqual({ name, command: name });
      expect({ name, image: interpolate(s.image), readOnly: s.read_only, tmpfs: s.tmpfs, network: s.network_mode })
        .toEqual({ name, image: 'localhost/gatehouse:dev', readOnly: true, tmpfs: ['/tmp'], network: 'host' });
    }
  });

  it('gives every command arguments its own parser accepts, with no error', () => {
    for (const name of commands) {
      const result = loadConfig(name as CommandName, argv(name), { readFile: composeSecret });
      expect({ name, errors: result.errors }).toEqual({ name, errors: [] });
    }
  });

  it('passes every secret as file:<path> of the read-only secrets mount, so none is in the host\'s process list (issue 37 §5)', () => {
    const secretFlags = new Set(Object.values(registry).filter((spec) => 'secret' in spec && spec.secret === true).map((spec) => spec.flag.split(' ')[0]!));
    for (const name of commands) {
      expect({ name, volumes: compose.services[name]!.volumes }).toEqual({ name, volumes: [`\${GATEHOUSE_SECRETS_DIR:-./.gatehouse-secrets}:${SECRETS}:ro`] });
      // as in the chart, a Redis or NATS URL without credentials (no `user:password@`) may be a plain flag
      const plainUrl = (a: string): boolean => /^--(redis|nats)-url=/.test(a) && !interpolate(a).includes('@');
      const given = compose.services[name]!.command.slice(1).filter((a) => secretFlags.has(a.split('=')[0]!) && !plainUrl(a));
      // the admin and client secrets everywhere but notifications (no admin secret); the database URL and JWT secret beside the gateway
      const fewest = name === 'gateway' ? 2 : name === 'notifications' ? 3 : 4;
      expect({ name, enough: given.length >= fewest }).toEqual({ name, enough: true });
      for (const arg of given) {
        const [flagPart, value] = [arg.split('=')[0]!, arg.slice(arg.indexOf('=') + 1)];
        expect({ name, arg }).toEqual({ name, arg: `${flagPart}=file:${SECRETS}/${flagPart.slice(2)}` });
        expect(value).not.toContain('${');
      }
    }
    // the secrets directory stays out of git and out of the image's build context
    expect(read('.gitignore').split('\n')).toContain('/.gatehouse-secrets/');
    expect(read('.dockerignore').split('\n')).toContain('.gatehouse-secrets');
  });

  it('creates the database from every service at once (--database-create: one wins, the others connect to it)', () => {
    for (const name of commands) {
      expect({ name, create: argv(name).includes('--database-create') }).toEqual({ name, create: flag(argv(name), '--database-type') !== undefined });
    }
  });

  it('listens on distinct ports and points each --<peer>-address / --<peer>-graphql-url at that peer', () => {
    const listens = new Map<string, string>();
    for (const name of commands) {
      for (const f of ['--http-port', '--grpc-port', '--metrics-port']) {
        const port = flag(argv(name), f);
        if (port === undefined) continue;
        expect({ port, taken: listens.get(port) }).toEqual({ port, taken: undefined });
        listens.set(port, `${name} ${f}`);
      }
    }
    for (const name of commands) {
      for (const a of argv(name)) {
        const m = /^--(\w+)-(address|graphql-url)=(.*)$/.exec(a);
        if (!m) continue;
        const [, peer, kind, value] = m as unknown as [string, string, string, string];
        const port = kind === 'address' ? value.split(':').at(-1)! : new URL(value).port;
        expect({ from: name, to: peer, listener: listens.get(port) })
          .toEqual({ from: name, to: peer, listener: `${peer} ${kind === 'address' ? '--grpc-port' : '--http-port'}` });
      }
    }
  });

  it('scripts/podman/compose-podman.sh drops podman-compose 1.0.3\'s --net/--network-alias beside --network host only', () => {
    // the podman it execs is a recorder on PATH: what is under test is the argument list the shim passes on
    const dir = mkdtempSync(path.join(tmpdir(), 'compose-podman-'));
    try {
      writeFileSync(path.join(dir, 'podman'), '#!/bin/sh\nprintf "%s\\n" "$@"\n', { mode: 0o755 });
      const run = (args: string[]): string[] => {
        // eslint-disable-next-line no-restricted-properties -- passes the inherited environment through with PATH first; reads no configuration
        const r = spawnSync('bash', [path.join(ROOT, 'scripts/podman/compose-podman.sh'), ...args], { encoding: 'utf8', env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } });
        expect(r.status).toBe(0);
        return r.stdout.trim().split('\n');
      };
      expect(run(['run', '--name=x', '--network', 'host', '--tmpfs', '/tmp', '--net', 'image_default', '--network-alias', 'authz', 'img', 'authz', '--host=127.0.0.1']))
        .toEqual(['run', '--name=x', '--network', 'host', '--tmpfs', '/tmp', 'img', 'authz', '--host=127.0.0.1']);
      expect(run(['run', '--net', 'image_default', '--network-alias', 'authz', 'img']))
        .toEqual(['run', '--net', 'image_default', '--network-alias', 'authz', 'img']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts each service after the peers it calls (depends_on)', () => {
    for (const name of commands) {
      const peers = argv(name).flatMap((a) => /^--(\w+)-address=/.exec(a)?.[1] ?? []);
      expect({ name, dependsOn: [...(compose.services[name]!.depends_on ?? [])].sort() })
        .toEqual({ name, dependsOn: [...new Set(peers)].sort() });
    }
  });
});

describe('the image\'s dependencies (`npm ci --omit=dev`)', () => {
  /** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or null for builtins and workspaces. */
  const packageOf = (spec: string): string | null => {
    if (spec.startsWith('.') || spec.startsWith('node:') || spec.startsWith('@gatehouse/') || builtinModules.includes(spec)) return null;
    const parts = spec.split('/');
    return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  };
  /** Sources the processes load: not tests, suites, benches, scripts, the test harness (libs/testing) or the login app (built apart). */
  const runtimeSources = (): string[] => ['bin', 'gateway/src', 'libs', 'services'].flatMap((dir) =>
    (readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]).map((f) => path.join(dir, f)))
    .filter((f) => /\.(ts|mjs)$/.test(f) && !/(\.test\.ts|[.-]suite\.ts|\.d\.ts)$/.test(f))
    .filter((f) => !/(^|\/)(node_modules|test|tests|bench|scripts)\//.test(f) && !f.startsWith('libs/testing/') && f !== 'bin/start-dev.ts');

  it('lists every package the services, the gateway and the CLI import under dependencies', () => {
    const { dependencies } = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    const missing = new Set<string>();
    for (const file of runtimeSources()) {
      const text = read(file);
      for (const m of text.matchAll(/(?:^|\s)(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)) {
        const pkg = packageOf((m[1] ?? m[2] ?? m[3])!);
        if (pkg && !(pkg in dependencies)) missing.add(`${pkg} (${file})`);
      }
    }
    expect([...missing].sort()).toEqual([]);
  });
});
