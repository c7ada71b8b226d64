/**
 * @module test/support/webhook-receiver
 * An HTTP server of the test's own on 127.0.0.1 that receives webhook deliveries (issue 17): it
 * records every request with its raw body, and each path answers by a script the test sets (fail the
 * first N times, redirect, a fixed status and body).
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** the raw body, as sent */
  raw: string;
  body: any;
}

/** How a path answers its n-th request (0-based). */
export type Script = (n: number) => { status: number; body?: string; headers?: Record<string, string> };

export interface Receiver {
  /** `http://<host>:<port>` */
  readonly url: string;
  readonly port: number;
  /** requests to `path`, in arrival order */
  at(path: string): Received[];
  /** sets how `path` answers (default 200 `ok`) */
  script(path: string, s: Script): void;
  /** resolves once `path` has received `count` requests; throws after `timeoutMs` */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** True when `signature` is `sha256=<hex HMAC-SHA-256 of raw under secret>` (behaviour.md §5.4). */
export function verifySignature(secret: string, raw: string, signature: string | string[] | undefined): boolean {
  return signature === `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
}

/** Starts the receiver on `host` (default 127.0.0.1; a node address for a cluster's pods), port 0. */
export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, Script>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0]!;
      let body: unknown = null;
      try { body = JSON.parse(raw); } catch { body = raw; }
      const n = received.filter((r) => r.path === path).length;
      received.push({ path, headers: req.headers, raw, body });
      const answer: ReturnType<Script> = (scripts.get(path) ?? (() => ({ status: 200, body: 'ok' })))(n);
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}`,
    port,
    at: (path) => received.filter((r) => r.path === path),
    script: (path, s) => { scripts.set(path, s); },
    async waitFor(path, count, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const got = received.filter((r) => r.path === path);
        if (got.length >= count) return got;
        if (Date.now() > until) throw new Error(`receiver: ${got.length} of ${count} requests at ${path} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
