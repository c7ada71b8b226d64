/**
 * @module @gatehouse/testing/deployment
 * Starts Gatehouse in either mode on free loopback ports, as real processes (STYLE §8: e2e tests
 * see only the public REST/GraphQL/gRPC surface):
 * - all-in-one: `gatehouse all` on a fresh SQLite file (or another database);
 * - split: every service command (`authn`, `mfa`, `admin`, `orgs`, `authz` with one or more replicas,
 *   `notifications`), each after the peers it calls, and `gateway` on a
 *   fresh PostgreSQL database, Redis and NATS JetStream (its own stream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createScratchDatabase, type DatabaseType } from '@gatehouse/db';
import { startFerretDb } from './ferretdb.ts';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { COMMANDS, listFlags, registry, type CommandName, type FlagKey } from '@gatehouse/config';
import { deriveInternalToken } from '@gatehouse/rpc';
import { freePort, waitForHttp } from './ports.ts';
import { spawnGatehouse, type GatehouseProcess } from './process.ts';

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
   * all-in-one: number of `gatehouse all` processes on the one database (default 1), each on its own
   * ports with the same `--url` and secrets, listed in {@link Deployment.replicaUrls}.
   */
  replicas?: number;
  /** ms to wait for readiness (default 30 s) */
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
   * @throws Error when `command` was not stopped, or it does not become ready
   */
  startProcess(command: CommandName): Promise<void>;
  /** {@link stopProcess} then {@link startProcess} */
  restart(command: CommandName): Promise<void>;
  stop(): Promise<void>;
}

const secret = (): string => randomBytes(24).toString('base64url');

/** Keeps the flags `command` accepts (each process gets only its own flags, as the Helm chart renders them). */
export function flagsFor(command: CommandName, flags: readonly string[]): string[] {
  const accepted = new Set(listFlags(command).map((f) => f.flag.split(' ')[0]!));
  return flags.filter((f) => accepted.has(f.split('=')[0]!));
}

async function scratch(type: DatabaseType): Promise<{ url: string; files?: string; drop(): Promise<void> }> {
  if (type === 'mongodb') {
    // FerretDB v1 on SQLite: the MongoDB stand-in (README "MongoDB"); one server per deployment
    const ferret = await startFerretDb();
    return { url: ferret.url('gatehouse'), files: ferret.dir, drop: ferret.stop };
  }
  if (type === 'sqlite') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-e2e-'));
    return { url: path.join(dir, 'gatehouse.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const db = await createScratchDatabase(type);
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
  const db = await scratch(dbType);
  const useNats = mode === 'split' || opts.nats === true;
  const natsStream = useNats ? `GH_E2E_${randomBytes(5).toString('hex').toUpperCase()}` : null;
  const natsUrl = opts.natsUrl ?? MACHINE.natsUrl;
  const common = [
    '--host=127.0.0.1', '--log-level=warn', `--url=${url}`,
    `--admin-secret=${adminSecret}`, `--client-id=${clientId}`, `--client-secret=${clientSecret}`,
    '--app-cookie-secure=false', '--app-cookie-same-site=lax', '--rate-limit-rps=1000', '--rate-limit-burst=1000',
    ...(opts.mfa === true ? [] : ['--disable-mfa']),
  ];
  const dataFlags = [
    `--database-type=${dbType}`, `--database-url=${db.url}`, '--jwt-type=HS256', `--jwt-secret=${jwtSecret}`,
    `--encryption-key=${encryptionKey}`,
    ...(natsStream ? [`--nats-url=${natsUrl}`, `--nats-stream=${natsStream}`] : []),
  ];
  const redisFlags = mode === 'split' || opts.redis ? [`--redis-url=${MACHINE.redisUrl}`] : [];
  const extra = opts.flags ?? [];
  const timeout = opts.readyTimeoutMs ?? 30_000;
  const processes: GatehouseProcess[] = [];
  const authzGrpcAddresses: string[] = [];
  const authnGrpcAddresses: string[] = [];
  const replicaUrls: string[] = [url];
  const serviceGrpcAddresses = new Map<CommandName, string>();
  /** how each process was started, by its index in `processes` */
  const specs: Array<{ command: CommandName; flags: string[]; healthUrl: string }> = [];
  const stopped = new Map<CommandName, number>();
  const spawnTracked = (command: CommandName, flags: string[], healthUrl: string): GatehouseProcess => {
    const p = spawnGatehouse(command, flags, opts.env);
    processes.push(p);
    specs.push({ command, flags, healthUrl });
    return p;
  };

  const stopAll = async (): Promise<void> => {
    await Promise.all([...processes].reverse().map((p) => p.stop()));
    await db.drop().catch(() => undefined);
    if (natsStream) await deleteStream(natsUrl, natsStream).catch(() => undefined);
  };

  try {
    if (mode === 'all') {
      const p = spawnTracked('all', flagsFor('all', [...common, ...dataFlags, ...redisFlags,
        `--http-port=${httpPort}`, `--grpc-port=${grpcPort}`, `--metrics-port=${metricsPort}`, ...extra]), `${url}/healthz`);
      await waitForHttp(`${url}/healthz`, timeout, p.alive);
      for (let i = 1; i < (opts.replicas ?? 1); i++) {
        const [h, g, m] = [await freePort(), await freePort(), await freePort()];
        const health = `http://127.0.0.1:${h}/healthz`;
        const r = spawnTracked('all', flagsFor('all', [...common, ...dataFlags, ...redisFlags,
          `--http-port=${h}`, `--grpc-port=${g}`, `--metrics-port=${m}`, ...extra]), health);
        await waitForHttp(health, timeout, r.alive);
        replicaUrls.push(`http://127.0.0.1:${h}`);
      }
    } else {
      type Ports = { grpc: number; http: number; metrics: number };
      const ports = async (): Promise<Ports> => ({ grpc: await freePort(), http: await freePort(), metrics: await freePort() });
      const svc = async (command: CommandName, peers: string[] = []): Promise<{ grpc: string; graphql: string }> => {
        const { grpc: g, http: h, metrics: m } = await ports();
        const p = spawnTracked(command, flagsFor(command, [...common, ...dataFlags, ...redisFlags,
          `--grpc-port=${g}`, `--http-port=${h}`, `--metrics-port=${m}`, ...peers, ...extra]), `http://127.0.0.1:${h}/healthz`);
        await waitForHttp(`http://127.0.0.1:${h}/healthz`, timeout, p.alive);
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
        const peerFlags = peersOf(command).map((peer) => `--${peer}-address=${started.get(peer)![0]!.grpc}`);
        const replicas = command === 'authz' ? (opts.authzReplicas ?? 1) : command === 'authn' ? (opts.authnReplicas ?? 1) : 1;
        const instances = [];
        for (let i = 0; i < replicas; i++) instances.push(await svc(command, peerFlags));
        started.set(command, instances);
      }
      authzGrpcAddresses.push(...(started.get('authz') ?? []).map((a) => a.grpc));
      authnGrpcAddresses.push(...(started.get('authn') ?? []).map((a) => a.grpc));
      for (const [command, instances] of started) serviceGrpcAddresses.set(command, instances[0]!.grpc);
      // a replicated service is balanced over all its processes; any other is reached at its first
      const routes = [...started].map(([command, all]): [CommandName, typeof all] => [command, command === 'authz' ? all : all.slice(0, 1)]).flatMap(([command, instances]) => [
        ...(accepts('gateway', `${command}Address`) ? [`--${command}-address=${instances.map((a) => a.grpc).join(',')}`] : []),
        ...(accepts('gateway', `${command}GraphqlUrl`) ? [`--${command}-graphql-url=${instances.map((a) => a.graphql).join(',')}`] : []),
      ]);
      const gw = spawnTracked('gateway', flagsFor('gateway', [...common, ...redisFlags,
        `--http-port=${httpPort}`, `--grpc-port=${grpcPort}`, `--metrics-port=${metricsPort}`, ...routes, ...extra]), `${url}/healthz`);
      await waitForHttp(`${url}/healthz`, timeout, gw.alive);
    }
  } catch (err) {
    const logs = processes.map((p) => `--- ${p.command} ---\n${p.output()}`).join('\n');
    await stopAll();
    throw new Error(`${(err as Error).message}\n${logs}`);
  }

  const stopProcess = async (command: CommandName): Promise<void> => {
    const i = processes.findIndex((p, k) => specs[k]!.command === command && p.alive());
    if (i === -1) throw new Error(`no running ${command} process`);
    await processes[i]!.stop();
    stopped.set(command, i);
  };
  const startProcess = async (command: CommandName): Promise<void> => {
    const i = stopped.get(command);
    if (i === undefined) throw new Error(`${command} was not stopped with stopProcess`);
    const spec = specs[i]!;
    const p = spawnGatehouse(spec.command, spec.flags, opts.env);
    processes[i] = p;
    stopped.delete(command);
    await waitForHttp(spec.healthUrl, timeout, p.alive);
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
    async restart(command) {
      await stopProcess(command);
      await startProcess(command);
    },
    stop: stopAll,
  };
}
