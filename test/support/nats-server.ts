/**
 * @module test/support/nats-server
 * A nats-server of a test's own (Debian's `/usr/sbin/nats-server`, JetStream on), for fault tests that stop
 * the bus: the machine's shared NATS must never be stopped by a test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** Starts nats-server on 127.0.0.1:`port` with JetStream storing in `storeDir` (kept across restarts). */
export function startNats(port: number, storeDir: string): ChildProcess {
  return spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
}

/**
 * Resolves once 127.0.0.1:`port` accepts a TCP connection.
 * @throws Error when it does not within `timeoutMs` (default 10 000 ms)
 */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nats-server not listening on ${port} after ${timeoutMs} ms`);
}

/** SIGKILLs `p` (a no-op when it already exited) and resolves once it has exited. */
export async function killProcess(p: ChildProcess | undefined): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
  p.kill('SIGKILL');
  await exited;
}
