/**
 * @module @gatehouse/observability/metrics-server
 * The dedicated metrics listener every process runs at `--metrics-host:--metrics-port`
 * (default 127.0.0.1:8081). `/metrics` is never served on the HTTP port (spec §1 additional rules).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts a plain node:http server answering only `GET`/`HEAD /metrics` with the registry in the
 * Prometheus text format; other paths 404, other methods on /metrics 405. `registry` is this process's,
 * or anything that renders metrics the same way (an `--http-workers` primary's sum over its workers).
 */
export async function startMetricsServer(options: { host: string; port: number; registry: Pick<Registry, 'metrics' | 'contentType'> }): Promise<MetricsServer> {
  const { registry } = options;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method Not Allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('internal error\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }),
  };
}
