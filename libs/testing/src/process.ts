/** @module @gatehouse/testing/process Spawns `gatehouse <command>` processes the way an operator would. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const GATEHOUSE_BIN = path.join(REPO_ROOT, 'bin/gatehouse.mjs');

export interface GatehouseProcess {
  readonly command: string;
  readonly child: ChildProcess;
  /** everything the process printed so far (stdout and stderr) */
  output(): string;
  alive(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it exited */
  stop(graceMs?: number): Promise<void>;
  /** resolves with the exit code once the process exits */
  exited: Promise<number | null>;
}

/**
 * Starts `node bin/gatehouse.mjs <command> ...flags` with the repo's Node 24 (process.execPath under npm scripts).
 * @param env variables added to the inherited environment (e.g. NODE_EXTRA_CA_CERTS for a test CA)
 */
export function spawnGatehouse(command: string, flags: readonly string[], env?: Readonly<Record<string, string>>): GatehouseProcess {
  const child = spawn(process.execPath, [GATEHOUSE_BIN, command, ...flags], {
    // eslint-disable-next-line no-restricted-properties -- passes the inherited environment through; reads no configuration
    cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  // the last MAX characters or a little more, kept as chunks: trimming one string per chunk copied up
  // to MAX characters each time, which slowed a bench's load generator in this process under an
  // info-level access log (issue 38 §4)
  const chunks: string[] = [];
  let kept = 0;
  const MAX = 2_000_000;
  const append = (chunk: Buffer): void => {
    const text = chunk.toString();
    chunks.push(text);
    kept += text.length;
    while (chunks.length > 1 && kept - chunks[0]!.length >= MAX) kept -= chunks.shift()!.length;
  };
  const output = (): string => {
    const all = chunks.join('');
    return all.length > MAX ? all.slice(all.length - MAX) : all;
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  let running = true;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { running = false; resolve(code); }));
  return {
    command,
    child,
    output,
    alive: () => running,
    exited,
    async stop(graceMs = 5000) {
      if (!running) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => { if (running) child.kill('SIGKILL'); }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs a command to completion (startup-rule tests): exit code and output. */
export async function runGatehouse(command: string, flags: readonly string[], timeoutMs = 20_000): Promise<{ code: number | null; output: string; stderr: string }> {
  const child = spawn(process.execPath, [GATEHOUSE_BIN, command, ...flags], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); stderr += c.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output, stderr };
}
