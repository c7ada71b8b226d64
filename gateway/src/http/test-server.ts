/** @module gateway/http/test-server Test helpers: run an Express app on 127.0.0.1:0 and send raw HTTP requests. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

export interface RunningApp {
  readonly base: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 with an ephemeral port. */
export function listen(app: Express): Promise<RunningApp> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        base: `http://127.0.0.1:${port}`,
        port,
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  /** parsed JSON body, or undefined when the body is not JSON */
  readonly json: any;
}

/**
 * Sends one request with exactly the given headers (node:http lets tests set Host, Origin,
 * Referer and X-Forwarded-For, which fetch may not).
 */
export function send(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = httpRequest({ method, hostname: url.hostname, port: url.port, path: url.pathname + url.search, headers: { connection: 'close', ...options.headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text === '' ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}
