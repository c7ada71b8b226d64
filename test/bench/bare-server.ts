/**
 * @module bench/bare-server
 * The baseline: a bare `node:http` server in its own process (as Gatehouse is), answering every
 * request with one fixed JSON body after reading the request body.
 * Usage: `node test/bench/bare-server.ts '<json body>' [<workers>]`; prints `listening <port>` once ready
 * (127.0.0.1, a free port) and exits on SIGTERM. With `<workers>` above 1, that many node:cluster workers
 * share the port (the primary hands out connections round-robin), for `http-workers-bench.ts`.
 */
import cluster from 'node:cluster';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const body = Buffer.from(process.argv[2] ?? '{"ok":true}');
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const workers = Number(process.argv[3] ?? 1);

if (workers > 1 && cluster.isPrimary) {
  cluster.setupPrimary({ args: [process.argv[2] ?? '{"ok":true}', '1'] });
  let ready = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('message', (port: number) => {
      if (++ready === workers) process.stdout.write(`listening ${port}\n`);
    });
  }
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    process.exit(0);
  });
} else {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, headers);
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as AddressInfo).port;
    if (cluster.isWorker) process.send?.(port);
    else process.stdout.write(`listening ${port}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}
