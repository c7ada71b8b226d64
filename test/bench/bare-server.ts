/**
 * @module bench/bare-server
 * The baseline: a bare `node:http` server in its own process (as Gatehouse is), answering every
 * request with one fixed JSON body after reading the request body.
 * Usage: `node test/bench/bare-server.ts '<json body>'`; prints `listening <port>` once ready
 * (127.0.0.1, a free port) and exits on SIGTERM.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const body = Buffer.from(process.argv[2] ?? '{"ok":true}');
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) };

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
