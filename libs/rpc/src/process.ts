/**
 * @module @gatehouse/rpc/process
 * Process lifecycle shared by every `gatehouse <command>` main: fatal startup lines in the
 * behaviour.md §1.4 form, listener failures named by address, and graceful shutdown on SIGTERM/SIGINT.
 */

/** Prints `FATAL: <message>` to stderr and exits 1 (behaviour.md §1.4). */
export function fatal(message: string): never {
  process.stderr.write(`FATAL: ${message}\n`);
  process.exit(1);
}

/** Runs `start`; a failure becomes the §1.4 line for that kind of failure. */
export async function orFatal<T>(what: 'database' | 'nats' | 'engine' | { host: string; port: number }, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const reason = reasonOf(err);
    if (what === 'database') fatal(`cannot connect to the database: ${reason}`);
    if (what === 'nats') fatal(`cannot connect to NATS (--nats-url): ${reason}`);
    if (what === 'engine') fatal(`authorization engine failed to start: ${reason}`);
    fatal(`cannot listen on ${what.host}:${what.port}: ${reason}`);
  }
}

/** An error's message followed by its causes' (`a: b: c`), each once: the FATAL line names the cause. */
function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const message = e instanceof AggregateError && e.errors[0] instanceof Error ? e.errors[0].message : e instanceof Error ? e.message : String(e);
    if (message && !parts.some((p) => p.includes(message))) parts.push(message);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}

/** Closes everything (in reverse order of registration) once on SIGTERM or SIGINT, then exits 0. */
export function closeOnSignal(closers: Array<() => Promise<unknown>>, log: (msg: string) => void): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    log(`${signal} received, shutting down`);
    void (async () => {
      for (const close of [...closers].reverse()) {
        try {
          await close();
        } catch {
          // keep closing the rest
        }
      }
      process.exit(0);
    })();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
