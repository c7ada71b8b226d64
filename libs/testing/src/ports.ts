/** @module @gatehouse/testing/ports Free loopback ports for test deployments. */
import net from 'node:net';

/**
 * Ports handed out come from 20000–31999, below Linux's ephemeral range (32768–60999 by default,
 * /proc/sys/net/ipv4/ip_local_port_range). A port the OS picks with `listen(0)` sits in the ephemeral
 * range, so between our probe and the server's own `listen` any outgoing connection (a test's fetch, a
 * service's PostgreSQL or NATS client) may take it and the server dies with EADDRINUSE. Below the range
 * only explicit listeners compete, and each jest worker draws from its own slice, so two workers never
 * hand out the same port.
 */
const BASE = 20_000;
const SPAN = 12_000;
const SLICES = 8;
const SLICE = SPAN / SLICES;
// jest's worker number, not configuration: the flags rule (spec §1) is about the server.
// eslint-disable-next-line no-restricted-properties
const worker = Math.max(1, Number(process.env.JEST_WORKER_ID ?? '1'));
const sliceStart = BASE + ((worker - 1) % SLICES) * SLICE;
let next = Math.floor(Math.random() * SLICE);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A TCP port free on 127.0.0.1 at the time of the call, outside the ephemeral range and not handed out
 * before by this process (until its slice of 1500 ports wraps around).
 * @throws Error when every port of this worker's slice is taken
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < SLICE; tries++) {
    const port = sliceStart + (next++ % SLICE);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}–${sliceStart + SLICE - 1}`);
}

/** Polls `url` until it answers 200, or fails after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs: number, alive: () => boolean = () => true): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!alive()) throw new Error(`process exited before ${url} was ready`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms (${last})`);
}
