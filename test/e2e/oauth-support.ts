/**
 * @module test/e2e/oauth-support
 * What the OAuth browser suites share: the relying party's redirect URI, a small HTTP server of the
 * test's own on 127.0.0.1 that records every callback URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The RP's redirect URI: a server on 127.0.0.1 that answers 200 and records every callback URL. */
export async function startRpServer(): Promise<{ callback: string; seen: URL[]; close(): Promise<void> }> {
  const seen: URL[] = [];
  let base = '';
  const server = http.createServer((req, res) => {
    seen.push(new URL(req.url ?? '/', base));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>RP</title><h1>back at the RP</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { callback: `${base}/callback`, seen, close: () => new Promise((resolve) => { server.close(() => resolve()); }) };
}
