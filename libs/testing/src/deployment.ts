/**
 * @module @gatehouse/testing/deployment
 * Starts Gatehouse in either mode on free loopback ports, as real processes (STYLE §8: e2e tests
 * see only the public REST/GraphQL/gRPC surface):
 * - all-in-one: `gatehouse all` on a fresh SQLite file (or another database);
 * - split: every service command (`authn`, `mfa`, `admin`, `orgs`, `authz` with one or more replicas,
 *   `notifications`), each after the peers it calls (or all at once, `startTogether`), and `gateway` on a
 *   fresh PostgreSQL database, Redis and NATS JetStream (its own stream).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createScratchDatabase, reserveScratchDatabase, type DatabaseType } from '@gatehouse/db';
import { startFerretDb } from './ferretdb.ts';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { COMMANDS, listFlags, registry, type CommandName, type FlagKey } from '@gatehouse/config';
import { deriveInternalToken } from '@gatehouse/rpc';
import { freePort, waitForHttp } from './ports.ts';
import { spawnGatehouse, type GatehouseProcess } from './process.ts';
import { assertStartsAllowed, beginStart, endStart } from './starts.ts';

export const MACHINE = {
  postgresUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  mariadbUrl: 'mysql://root@127.0.0.1:3306/test',
  redisUrl: 'redis://127.0.0.1:6379',
  natsUrl: 'nats://127.0.0.1:4222',
} as const;

export type Mode = 'all' | 'split';

export interface StartOptions {
  /** extra flags for every process (later flags win over the defaults) */
  flags?: string[];
  /** all-in-one: main database (default sqlite); split always uses a fresh PostgreSQL database unless given */
  database?: DatabaseType;
  /** all-in-one: use Redis for sessions (default false) */
  redis?: boolean;
  /** all-in-one: use NATS JetStream for events (default false) */
  nats?: boolean;
  /** split: number of authz processes behind the gateway (default 1) */
  authzReplicas?: number;
  /**
   * split: number of authn processes (default 1). The gateway and the peers use the first; a test
   * reaches the others directly at {@link Deployment.authnGrpcAddresses}.
   */
  authnReplicas?: number;
  /**
   * split: number of mfa processes (default 1). The gateway uses the first; authn replica i calls mfa
   * replica i modulo their number, and a test reaches each at {@link Deployment.mfaGrpcAddresses}.
   */
  mfaReplicas?: number;
  /**
   * all-in-one: number of `gatehouse all` processes on the one database (default 1), each on its own
   * ports with the same `--url` and secrets, listed in {@link Deployment.replicaUrls}.
   */
  replicas?: number;
  /**
   * flags for one process only, after {@link flags}: split mode calls it per service process (`replica` is
   * its index among that service's replicas), all-in-one per `gatehouse all` replica; e.g. a port of its own
   */
  replicaFlags?: (command: CommandName, replica: number) => readonly string[];
  /** ms to wait for each process's readiness (default 60 s: a cold start under CI's two busy workers has taken over 30 s) */
  readyTimeoutMs?: number;
  /** NATS server for split mode (and all-in-one with `nats`); default the machine's {@link MACHINE.natsUrl} */
  natsUrl?: string;
  /**
   * Run the MFA gate (behaviour.md §4.1). Default false: every process gets `--disable-mfa`, so a
   * fresh user's login issues tokens (G1) as tests that are not about MFA expect. MFA tests pass
   * `mfa: true` (and `--enforce-mfa`, `--disable-<method>` in `flags` as they need). Every process
   * always gets an `--encryption-key` (TOTP secrets, OTP HMACs).
   */
  mfa?: boolean;
  /**
   * host name of `--url` and of {@link Deployment.url} (default `127.0.0.1`); browser tests of passkeys
   * use `localhost`, because an IP address is not a valid WebAuthn RP ID. Processes still listen on 127.0.0.1.
   */
  urlHost?: string;
  /**
   * environment variables added for every process, e.g. `NODE_EXTRA_CA_CERTS` naming a test CA's PEM
   * file, so the services trust an HTTPS peer the test started (an org's OIDC IdP)
   */
  env?: Readonly<Record<string, string>>;
  /**
   * Pass every secret the harness generates (admin and client secret, JWT secret, encryption key) as
   * `--flag=file:<path>` of a file in a private temporary directory, as the chart does with its Secret
   * volume (issue 37 §5), so no secret is in any process's argv. Default false: literal values.
   */
  secretFiles?: boolean;
  /**
   * Split mode: spawn every process at once (the gateway and each service replica, ports chosen first so
   * each knows where its peers will listen), as Kubernetes and compose start them, then wait for all of
   * them; default false, each service after the peers it calls. With {@link databaseCreate}, this is
   * the concurrent `--database-create` start of issue 37 §5.
   */
  startTogether?: boolean;
  /**
   * PostgreSQL/MySQL/MariaDB: reserve a fresh database name without creating it and give every process
   * `--database-create`, so the processes create it themselves. Default false: the harness creates it.
   */
  databaseCreate?: boolean;
}

export interface Deployment {
  readonly mode: Mode;
  /** `http://127.0.0.1:<port>` of the gateway (also `--url`; the host is {@link StartOptions.urlHost} when given) */
  readonly url: string;
  /** `127.0.0.1:<port>` of the public gRPC port */
  readonly grpcAddress: string;
  /** `http://127.0.0.1:<port>/metrics` of the gateway's metrics listener */
  readonly metricsUrl: string;
  readonly adminSecret: string;
  readonly clientId: string;
  readonly processes: readonly GatehouseProcess[];
  /** the authz replicas in split mode, so a test can address each directly */
  readonly authzGrpcAddresses: readonly string[];
  /** the authn processes in split mode (see {@link StartOptions.authnReplicas}); empty in all-in-one */
  readonly authnGrpcAddresses: readonly string[];
  /** the mfa processes in split mode (see {@link StartOptions.mfaReplicas}); empty in all-in-one */
  readonly mfaGrpcAddresses: readonly string[];
  /** all-in-one: the HTTP base URL of every replica ({@link url} first); split: the gateway's only */
  readonly replicaUrls: readonly string[];
  /**
   * Split mode: the gRPC address each service process listens on (its `*Internal` APIs are served
   * there to callers holding {@link internalToken}); empty in all-in-one, whose internal calls stay
   * in the process.
   */
  readonly serviceGrpcAddresses: ReadonlyMap<CommandName, string>;
  /** the deployment's internal token (derived from `--client-secret`), for service-to-service calls in tests */
  readonly internalToken: string;
  readonly natsStream: string | null;
  /** the main database (`--database-type` / `--database-url`), so a test can inspect service tables */
  readonly databaseType: DatabaseType;
  readonly databaseUrl: string;
  /** mongodb: the directory of the FerretDB server's SQLite files (`<database>.sqlite`) */
  readonly databaseFiles?: string;
  output(): string;
  /**
   * Stops the (first) process running `command` (`all`, `gateway`, `authn`, `mfa`, `authz`,
   * `notifications`) with SIGTERM; {@link startProcess} starts it again with the same flags and ports.
   * @throws Error when no such process is running
   */
  stopProcess(command: CommandName): Promise<void>;
  /**
   * Starts a process stopped by {@link stopProcess} and waits until its /healthz answers.
   * @param change either flags added after the process's own for this start only (a later flag wins), so a
   *   test can run the same database and ports under another setting (`--disable-totp-login`), or a
   *   function that changes its flags from here on (e.g. a rotated `--encryption-key`); default: the same flags
   * @throws Error when `command` was not stopped, or it does not become ready
   */
  startProcess(command: CommandName, change?: readonly string[] | ((flags: string[]) => string[])): Promise<void>;
  /** the flags the (first) process running `command` was last started with */
  flagsOf(command: CommandName): string[];
  /** the `--encryption-key` every process was started with (one key) */
  readonly encryptionKey: string;
  /** {@link stopProcess} then {@link startProcess} */
  restart(command: CommandName, extraFlags?: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

const secret = (): string => randomBytes(24).toString('base64url');

/** Keeps the flags `command` accepts (each process gets only its own flags, as the Helm chart renders them). */
export function flagsFor(command: CommandName, flags: readonly string[]): string[] {
  const accepted = new Set(listFlags(command).map((f) => f.flag.split(' ')[0]!));
  return flags.filter((f) => accepted.has(f.split('=')[0]!));
}

async function scratch(type: DatabaseType, create = true): Promise<{ url: string; files?: string; drop(): Promise<void> }> {
  if (type === 'mongodb') {
    // FerretDB v1 on SQLite: the MongoDB stand-in (README "MongoDB"); one server per deployment
    const ferret = await startFerretDb();
    return { url: ferret.url('gatehouse'), files: ferret.dir, drop: ferret.stop };
  }
  if (type === 'sqlite') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-e2e-'));
    return { url: path.join(dir, 'gatehouse.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const db = create ? await createScratchDatabase(type) : reserveScratchDatabase(type);
  return { url: db.options.url!, drop: db.drop };
}

async function deleteStream(servers: string, name: string): Promise<void> {
  const nc = await connect({ servers, timeout: 2000, reconnect: false });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(name).catch(() => false);
  } finally {
    await nc.close();
  }
}

/** Whether `command` takes the flag of Config key `key` (the flag registry of libs/config). */
function accepts(command: CommandName, key: string): boolean {
  const spec = (registry as Record<string, { commands: readonly CommandName[] } | undefined>)[key as FlagKey];
  return spec !== undefined && spec.commands.includes(command);
}

/** The services `command` calls: those whose `--<service>-address` it takes. */
function peersOf(command: CommandName): CommandName[] {
  return COMMANDS.filter((peer) => peer !== command && peer !== 'all' && peer !== 'gateway' && accepts(command, `${peer}Address`));
}

/**
 * Waits until the gateway's `/readyz` body lists `entry` as `ok` (at any HTTP status: the gateway stays
 * Ready while a service it does not require is down). An entry the body does not list (a service the
 * gateway does not route to, such as notifications) is not waited for.
 * @throws Error when it is not `ok` within `timeoutMs`
 */
async function waitForGatewayEntry(readyzUrl: string, entry: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const checks = ((await (await fetch(readyzUrl)).json()) as { checks?: Record<string, string> }).checks ?? {};
      if (!(entry in checks) || checks[entry] === 'ok') return;
      last = checks[entry]!;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the gateway's /readyz did not list ${entry} as ok within ${timeoutMs} ms (${last})`);
}

/** Starts one deployment. Always `stop()` it (afterAll). */
export async function startDeployment(mode: Mode, opts: StartOptions = {}): Promise<Deployment> {
  const adminSecret = secret();
  const clientId = `client-${randomBytes(4).toString('hex')}`;
  const clientSecret = secret();
  const jwtSecret = secret();
  const encryptionKey = secret();
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const metricsPort = await freePort();
  const url = `http://${opts.urlHost ?? '127.0.0.1'}:${httpPort}`;
  const dbType: DatabaseType = opts.database ?? (mode === 'split' ? 'postgres' : 'sqlite');
  const databaseCreate = opts.databaseCreate === true && dbType !== 'sqlite' && dbType !== 'mongodb';
  const db = await scratch(dbType, !databaseCreate);
  const useNats = mode === 'split' || opts.nats === true;
  const natsStream = useNats ? `GH_E2E_${randomBytes(5).toString('hex').toUpperCase()}` : null;
  const natsUrl = opts.natsUrl ?? MACHINE.natsUrl;
  const secretDir = opts.secretFiles === true ? mkdtempSync(path.join(os.tmpdir(), 'gatehouse-secrets-')) : undefined;
  /** `--<flag>=<value>`, or with `secretFiles` `--<flag>=file:<dir>/<flag>` after writing the value there */
  const secretFlag = (flag: string, value: string): string => {
    if (secretDir === undefined) return `--${flag}=${value}`;
    const file = path.join(secretDir, flag);
    writeFileSync(file, `${value}\n`, { mode: 0o600 });
    return `--${flag}=file:${file}`;
  };
  const common = [
    '--host=127.0.0.1', '--log-level=warn', `--url=${url}`,
    secretFlag('admin-secret', adminSecret), `--client-id=${clientId}`, secretFlag('client-secret', clientSecret),
    '--app-cookie-secure=false', '--app-cookie-same-site=lax', '--rate-limit-rps=1000', '--rate-limit-burst=1000',
    ...(opts.mfa === true ? [] : ['--disable-mfa']),
  ];
  const dataFlags = [
    `--database-type=${dbType}`, `--database-url=${db.url}`, ...(databaseCreate ? ['--database-create'] : []),
    '--jwt-type=HS256', secretFlag('jwt-secret', jwtSecret),
    secretFlag('encryption-key', encryptionKey),
    ...(natsStream ? [`--nats-url=${natsUrl}`, `--nats-stream=${natsStream}`] : []),
  ];
  const redisFlags = mode === 'split' || opts.redis ? [`--redis-url=${MACHINE.redisUrl}`] : [];
  const extra = opts.flags ?? [];
  const own = (command: CommandName, replica: number): string[] => flagsFor(command, opts.replicaFlags?.(command, replica) ?? []);
  const timeout = opts.readyTimeoutMs ?? 60_000;
  const processes: GatehouseProcess[] = [];
  const authzGrpcAddresses: string[] = [];
  const authnGrpcAddresses: string[] = [];
  const mfaGrpcAddresses: string[] = [];
  const replicaUrls: string[] = [url];
  const serviceGrpcAddresses = new Map<CommandName, string>();
  /** how each process was started, by its index in `processes` */
  const specs: Array<{ command: CommandName; flags: string[]; healthUrl: string }> = [];
  const stopped = new Map<CommandName, number>();
  const spawnTracked = (command: CommandName, flags: string[], healthUrl: string): GatehouseProcess => {
    assertStartsAllowed();
    const p = spawnGatehouse(command, flags, opts.env);
    processes.push(p);
    specs.push({ command, flags, healthUrl });
    return p;
  };

  const stopAll = async (): Promise<void> => {
    await Promise.all([...processes].reverse().map((p) => p.stop()));
    await db.drop().catch(() => undefined);
    if (secretDir !== undefined) rmSync(secretDir, { recursive: true, force: true });
    if (natsStream) await deleteStream(natsUrl, natsStream).catch(() => undefined);
  };

  try {
    beginStart(processes);
    if (mode === 'all') {
      const p = spawnTracked('all', flagsFor('all', [...common, ...dataFlags, ...redisFlags,
        `--http-port=${httpPort}`, `--grpc-port=${grpcPort}`, `--metrics-port=${metricsPort}`, ...extra, ...own('all', 0)]), `${url}/healthz`);
      await waitForHttp(`${url}/healthz`, timeout, p.alive);
      for (let i = 1; i < (opts.replicas ?? 1); i++) {
        const [h, g, m] = [await freePort(), await freePort(), await freePort()];
        const health = `http://127.0.0.1:${h}/healthz`;
        const r = spawnTracked('all', flagsFor('all', [...common, ...dataFlags, ...redisFlags,
          `--http-port=${h}`, `--grpc-port=${g}`, `--metrics-port=${m}`, ...extra, ...own('all', i)]), health);
        await waitForHttp(health, timeout, r.alive);
        replicaUrls.push(`http://127.0.0.1:${h}`);
      }
    } else {
      type Ports = { grpc: number; http: number; metrics: number };
      const ports = async (): Promise<Ports> => ({ grpc: await freePort(), http: await freePort(), metrics: await freePort() });
      /** the processes spawned but not yet waited for ({@link StartOptions.startTogether}) */
      const starting: Array<{ health: string; alive: () => boolean }> = [];
      const svc = async (command: CommandName, peers: string[], replica: number): Promise<{ grpc: string; graphql: string }> => {
        const { grpc: g, http: h, metrics: m } = await ports();
        const health = `http://127.0.0.1:${h}/healthz`;
        const p = spawnTracked(command, flagsFor(command, [...common, ...dataFlags, ...redisFlags,
          `--grpc-port=${g}`, `--http-port=${h}`, `--metrics-port=${m}`, ...peers, ...extra, ...own(command, replica)]), health);
        if (opts.startTogether === true) starting.push({ health, alive: p.alive });
        else await waitForHttp(health, timeout, p.alive);
        return { grpc: `127.0.0.1:${g}`, graphql: `http://127.0.0.1:${h}/graphql` };
      };
      // every service command, started after the peers it calls: a service that takes
      // `--<peer>-address` (libs/config) is told where that peer listens (calls go one way, so the
      // order exists). Nothing here names a service but authz, which may run several replicas.
      const started = new Map<CommandName, Array<{ grpc: string; graphql: string }>>();
      const pending = COMMANDS.filter((c) => c !== 'all' && c !== 'gateway');
      while (pending.length > 0) {
        const next = pending.findIndex((c) => peersOf(c).every((peer) => started.has(peer)));
        if (next === -1) throw new Error(`services call each other in a cycle: ${pending.join(', ')}`);
        const command = pending.splice(next, 1)[0]!;
        // replica i of a service calls replica i (modulo their number) of a single-address peer, so
        // replicated callers spread over replicated peers (issue 30: two authn on two mfa)
        const peerFlags = (i: number): string[] => peersOf(command).map((peer) => {
          const all = started.get(peer)!;
          return `--${peer}-address=${all[i % all.length]!.grpc}`;
        });
        const replicas = command === 'authz' ? (opts.authzReplicas ?? 1) : command === 'authn' ? (opts.authnReplicas ?? 1)
          : command === 'mfa' ? (opts.mfaReplicas ?? 1) : 1;
        const instances = [];
        for (let i = 0; i < replicas; i++) instances.push(await svc(command, peerFlags(i), i));
        started.set(command, instances);
      }
      authzGrpcAddresses.push(...(started.get('authz') ?? []).map((a) => a.grpc));
      authnGrpcAddresses.push(...(started.get('authn') ?? []).map((a) => a.grpc));
      mfaGrpcAddresses.push(...(started.get('mfa') ?? []).map((a) => a.grpc));
      for (const [command, instances] of started) serviceGrpcAddresses.set(command, instances[0]!.grpc);
      // a replicated service is balanced over all its processes; any other is reached at its first
      const routes = [...started].map(([command, all]): [CommandName, typeof all] => [command, command === 'authz' ? all : all.slice(0, 1)]).flatMap(([command, instances]) => [
        ...(accepts('gateway', `${command}Address`) ? [`--${command}-address=${instances.map((a) => a.grpc).join(',')}`] : []),
        ...(accepts('gateway', `${command}GraphqlUrl`) ? [`--${command}-graphql-url=${instances.map((a) => a.graphql).join(',')}`] : []),
      ]);
      const gw = spawnTracked('gateway', flagsFor('gateway', [...common, ...redisFlags,
        `--http-port=${httpPort}`, `--grpc-port=${grpcPort}`, `--metrics-port=${metricsPort}`, ...routes, ...extra]), `${url}/healthz`);
      starting.push({ health: `${url}/healthz`, alive: gw.alive });
      await Promise.all(starting.map((x) => waitForHttp(x.health, timeout, x.alive)));
    }
  } catch (err) {
    const logs = processes.map((p) => `--- ${p.command} ---\n${p.output()}`).join('\n');
    await stopAll();
    throw new Error(`${(err as Error).message}\n${logs}`);
  } finally {
    endStart(processes);
  }

  const stopProcess = async (command: CommandName): Promise<void> => {
    let i = processes.findIndex((p, k) => specs[k]!.command === command && p.alive());
    // a process that died (a fault test killed it) counts as stopped, so startProcess brings it back
    if (i === -1) i = processes.findIndex((p, k) => specs[k]!.command === command && !stopped.has(command) && !p.alive());
    if (i === -1) throw new Error(`no running ${command} process`);
    await processes[i]!.stop();
    stopped.set(command, i);
  };
  const startProcess = async (command: CommandName, change: readonly string[] | ((flags: string[]) => string[]) = []): Promise<void> => {
    const i = stopped.get(command);
    if (i === undefined) throw new Error(`${command} was not stopped with stopProcess`);
    const spec = specs[i]!;
    if (typeof change === 'function') spec.flags = change([...spec.flags]);
    const extra = typeof change === 'function' ? [] : flagsFor(spec.command, change);
    const p = spawnGatehouse(spec.command, [...spec.flags, ...extra], opts.env);
    processes[i] = p;
    stopped.delete(command);
    await waitForHttp(spec.healthUrl, timeout, p.alive);
    // split mode: the gateway uses a restarted service once its channel to it has connected again, which
    // the service's own entry of the gateway's /readyz body says (ok / down, listed whatever the status)
    const gateway = processes[specs.findIndex((x) => x.command === 'gateway')];
    if (mode === 'split' && command !== 'gateway' && gateway?.alive()) await waitForGatewayEntry(`${url}/readyz`, `service:${command}`, timeout);
  };

  return {
    mode,
    url,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    adminSecret,
    clientId,
    processes,
    authzGrpcAddresses,
    authnGrpcAddresses,
    mfaGrpcAddresses,
    replicaUrls,
    serviceGrpcAddresses,
    internalToken: deriveInternalToken(clientSecret),
    natsStream,
    databaseType: dbType,
    databaseUrl: db.url,
    ...(db.files ? { databaseFiles: db.files } : {}),
    output: () => processes.map((p) => `--- ${p.command} ---\n${p.output()}`).join('\n'),
    stopProcess,
    startProcess,
    flagsOf(command) {
      const spec = specs.find((x) => x.command === command);
      if (!spec) throw new Error(`no ${command} process`);
      return [...spec.flags];
    },
    encryptionKey,
    async restart(command, extraFlags) {
      await stopProcess(command);
      await startProcess(command, extraFlags);
    },
    stop: stopAll,
  };
}
