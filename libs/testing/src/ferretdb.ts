/**
 * @module @gatehouse/testing/ferretdb
 * FerretDB v1 (MongoDB wire protocol on SQLite), the MongoDB stand-in of the tests: no MongoDB server
 * can be installed on these machines (scripts/install-ferretdb.sh builds it into .tools/bin).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { REPO_ROOT } from './process.ts';

/** `.tools/bin/ferretdb` of the repository. */
export const FERRETDB_BIN = join(REPO_ROOT, '.tools/bin/ferretdb');

export interface FerretDb {
  readonly port: number;
  /** the SQLite directory: one `<database>.sqlite` file per MongoDB database */
  readonly dir: string;
  readonly proc: ChildProcess;
  /** `mongodb://127.0.0.1:<port>/<name>` */
  url(name: string): string;
  /** stops the server (SIGTERM, waits for its exit) and removes its directory */
  stop(): Promise<void>;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts FerretDB on SQLite in a fresh temp directory on a free 127.0.0.1 port; resolves once it
 * accepts TCP connections.
 * @throws Error when the binary is missing, exits, or does not listen within 20 s
 */
export async function startFerretDb(): Promise<FerretDb> {
  if (!existsSync(FERRETDB_BIN)) {
    throw new Error(`ferretdb not found at ${FERRETDB_BIN}: run scripts/install-ferretdb.sh first (it installs FerretDB into .tools/bin)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ferretdb-'));
  const port = await freePort();
  const proc = spawn(FERRETDB_BIN, [
    '--handler=sqlite', `--sqlite-url=file:${dir}/`, `--listen-addr=127.0.0.1:${port}`,
    `--state-dir=${dir}`, '--debug-addr=-', '--telemetry=disable', '--log-level=warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout?.on('data', (b: Buffer) => { output += b.toString(); });
  proc.stderr?.on('data', (b: Buffer) => { output += b.toString(); });
  const stop = async (): Promise<void> => {
    if (proc.pid !== undefined && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`ferretdb exited with ${proc.exitCode}: ${output}`);
    if (await canConnect(port)) return { port, dir, proc, url: (name) => `mongodb://127.0.0.1:${port}/${name}`, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`ferretdb did not listen on 127.0.0.1:${port} within 20 s: ${output}`);
}
