/**
 * @module @gatehouse/testing/openfga
 * Starts a real OpenFGA server (the binary scripts/install-openfga.sh builds into .tools/bin) on
 * 127.0.0.1 with its in-memory datastore, for the authz OpenFGA backend tests (issue 21 §4) and the
 * differential test of the engine against OpenFGA.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { freePort, waitForHttp } from './ports.ts';
import { REPO_ROOT } from './process.ts';

/** Where scripts/install-openfga.sh puts the server. */
export const OPENFGA_BIN = path.join(REPO_ROOT, '.tools/bin/openfga');

export interface OpenFgaServer {
  /** the HTTP API base URL, `http://127.0.0.1:<port>` */
  readonly url: string;
  /** the preshared key the server requires as a bearer token, when started with one */
  readonly apiToken: string | undefined;
  /** everything the server printed so far */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves once it exited (idempotent) */
  stop(): Promise<void>;
}

export interface OpenFgaOptions {
  /** require this preshared key (`--authn-method=preshared`) */
  apiToken?: string;
  /** extra `openfga run` flags (later flags win) */
  flags?: string[];
}

/**
 * Runs `openfga run` with the memory datastore on free loopback ports (HTTP, gRPC; playground and
 * metrics off; 30 s list deadlines) and waits until `/healthz` answers 200.
 * @throws Error when the binary is missing (run scripts/install-openfga.sh) or the server is not ready within 30 s
 */
export async function startOpenFga(opts: OpenFgaOptions = {}): Promise<OpenFgaServer> {
  if (!existsSync(OPENFGA_BIN)) throw new Error(`openfga not found at ${OPENFGA_BIN}: run scripts/install-openfga.sh first`);
  const http = await freePort();
  const grpc = await freePort();
  const child = spawn(OPENFGA_BIN, [
    'run', '--datastore-engine=memory', `--http-addr=127.0.0.1:${http}`, `--grpc-addr=127.0.0.1:${grpc}`,
    '--playground-enabled=false', '--metrics-enabled=false', '--log-level=warn', '--log-format=text',
    // ListObjects / ListUsers cut results short at their deadline (3 s by default) instead of failing;
    // on a loaded CI machine that would read as wrong answers, so tests give them 30 s
    '--listObjects-deadline=30s', '--listUsers-deadline=30s', '--request-timeout=60s',
    ...(opts.apiToken ? ['--authn-method=preshared', `--authn-preshared-keys=${opts.apiToken}`] : []),
    ...(opts.flags ?? []),
  ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const append = (chunk: Buffer): void => {
    out += chunk.toString();
    if (out.length > 1_000_000) out = out.slice(-1_000_000);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  let running = true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => { running = false; resolve(); }));
  const stop = async (): Promise<void> => {
    if (!running) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => { if (running) child.kill('SIGKILL'); }, 5000);
    await exited;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${http}`;
  try {
    await waitForHttp(`${url}/healthz`, 30_000, () => running);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}; openfga output: ${out}`, { cause: err });
  }
  return { url, apiToken: opts.apiToken, output: () => out, stop };
}
