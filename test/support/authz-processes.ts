/**
 * @module test/support/authz-processes
 * Extra processes beside a split deployment: one more `gatehouse authz` started with flags of our
 * choosing (for example a NoSQL main database, where the engine is off unless `--fga-store` is set,
 * spec §1), and a `gatehouse gateway` that routes authz to it and everything else to the deployment's
 * own authn. The flags are the ones the deployment gave its processes, with ports and the overridden
 * flags replaced, so both sides share the secrets, Redis and the token settings.
 */
import { freePort, spawnGatehouse, waitForHttp, type Deployment, type GatehouseProcess } from '@gatehouse/testing';

/** One started process and where it answers. */
export interface Started {
  process: GatehouseProcess;
  /** `127.0.0.1:<grpc port>` */
  grpcAddress: string;
  /** `http://127.0.0.1:<http port>` */
  httpUrl: string;
  stop(): Promise<void>;
}

/** The flags a deployment process was started with (argv after `gatehouse <command>`). */
export function flagsOf(d: Deployment, command: string): string[] {
  const p = d.processes.find((x) => x.command === command);
  if (!p) throw new Error(`the deployment has no ${command} process`);
  return p.child.spawnargs.slice(3);
}

/** `flags` with every flag named in `overrides` replaced by the override value. */
export function withFlags(flags: readonly string[], overrides: Record<string, string>): string[] {
  const names = new Set(Object.keys(overrides));
  return [...flags.filter((f) => !names.has(f.split('=')[0]!)), ...Object.entries(overrides).map(([k, v]) => `${k}=${v}`)];
}

async function start(command: string, flags: string[], httpPort: number, grpcPort: number): Promise<Started> {
  const p = spawnGatehouse(command, flags);
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  try {
    await waitForHttp(`${httpUrl}/healthz`, 30_000, p.alive);
  } catch (err) {
    await p.stop();
    throw new Error(`${(err as Error).message}\n${p.output()}`);
  }
  return { process: p, grpcAddress: `127.0.0.1:${grpcPort}`, httpUrl, stop: () => p.stop() };
}

/**
 * Starts one more `gatehouse authz` with the deployment's authz flags plus `overrides`
 * (e.g. `{'--database-type': 'mongodb', '--database-url': 'mongodb://…'}`), on fresh ports.
 */
export async function startExtraAuthz(d: Deployment, overrides: Record<string, string>): Promise<Started> {
  const [http, grpc, metrics] = [await freePort(), await freePort(), await freePort()];
  const flags = withFlags(flagsOf(d, 'authz'), {
    ...overrides, '--http-port': String(http), '--grpc-port': String(grpc), '--metrics-port': String(metrics),
  });
  return start('authz', flags, http, grpc);
}

/** Starts a gateway like the deployment's, but routing authz (REST, GraphQL and gRPC) to `authz`. */
export async function startGatewayFor(d: Deployment, authz: Started): Promise<Started & { url: string }> {
  const [http, grpc, metrics] = [await freePort(), await freePort(), await freePort()];
  const url = `http://127.0.0.1:${http}`;
  const flags = withFlags(flagsOf(d, 'gateway'), {
    '--url': url, '--http-port': String(http), '--grpc-port': String(grpc), '--metrics-port': String(metrics),
    '--authz-address': authz.grpcAddress, '--authz-graphql-url': `${authz.httpUrl}/graphql`,
  });
  const started = await start('gateway', flags, http, grpc);
  return { ...started, url };
}
