/** @module guard.test: the §5.6 outbound guard refuses every listed range, IPv4-mapped and odd IPv4 spellings. */
import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import { checkEndpoint, isRefusedAddress } from './guard.ts';
import { guardedGet, guardedPost } from './http.ts';

/** One address inside each refused range of behaviour.md §5.6, and its edges. */
const REFUSED = [
  '0.0.0.0', '0.255.255.255', '10.0.0.1', '10.255.255.255', '100.64.0.1', '100.127.255.255', '127.0.0.1', '127.255.255.254',
  '169.254.169.254', '172.16.0.1', '172.31.255.255', '192.0.0.8', '192.168.1.1', '198.18.0.1', '198.19.255.255',
  '224.0.0.1', '239.255.255.255', '240.0.0.1', '255.255.255.255', '::', '::1', 'fc00::1', 'fdff::1', 'fe80::1', 'febf::1', 'ff02::1',
  '::ffff:127.0.0.1', '::ffff:10.1.2.3', '::ffff:169.254.169.254',
];
const ALLOWED = ['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.32.0.1', '192.0.1.1', '198.20.0.1', '2606:4700::1111', '::ffff:8.8.8.8'];
const PRIVATE = 'invalid endpoint: requests to private/internal networks are not allowed';

describe('outbound guard (behaviour.md §5.6)', () => {
  it.each(REFUSED)('refuses %s', (ip) => expect(isRefusedAddress(ip)).toBe(true));
  it.each(ALLOWED)('allows %s', (ip) => expect(isRefusedAddress(ip)).toBe(false));

  it.each([
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::1]/',
    'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://localhost:8080/x', 'http://169.254.169.254/latest/meta-data',
    'https://[fe80::1]/', 'http://0/',
  ])('refuses %s at save', async (url) => {
    await expect(checkEndpoint(url, { allowPrivate: false })).rejects.toMatchObject({ code: 'invalid_argument', message: PRIVATE });
  });

  it('accepts a private target with --allow-private-webhook-targets, and a name that does not resolve', async () => {
    await expect(checkEndpoint('http://127.0.0.1:9/', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
    await expect(checkEndpoint('https://does-not-exist.invalid/hook', { allowPrivate: false })).resolves.toBeInstanceOf(URL);
  });

  it('refuses a name any of whose addresses is private (a resolver the test controls)', async () => {
    const resolve = async (): Promise<string[]> => ['93.184.216.34', '10.0.0.7'];
    await expect(checkEndpoint('https://hooks.example.com/', { allowPrivate: false, resolve })).rejects.toMatchObject({ message: PRIVATE });
  });

  it.each([
    ['', 'empty endpoint not allowed'], ['not a url', 'invalid endpoint: malformed URL'], ['ftp://example.com/', 'invalid endpoint: only http and https schemes are allowed'],
    ['http://user:pw@example.com/', 'invalid endpoint: malformed URL'], ['javascript:alert(1)', 'invalid endpoint: only http and https schemes are allowed'],
  ])('URL rules: %j → %s', async (url, message) => {
    await expect(checkEndpoint(url, { allowPrivate: true })).rejects.toMatchObject({ code: 'invalid_argument', message });
  });
});

describe('guardedPost (behaviour.md §5.4, §5.6)', () => {
  it('connects to the address it checked: a name that re-resolves to 127.0.0.1 at connect time is refused (DNS rebinding)', async () => {
    let calls = 0;
    // the save-time check saw a public address; the connection's own lookup gets the private one
    const resolve = async (): Promise<string[]> => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);
    await checkEndpoint('http://rebind.example.test:9/', { allowPrivate: false, resolve });
    await expect(guardedPost({ url: 'http://rebind.example.test:9/', headers: {}, body: '{}', allowPrivate: false, resolve }))
      .rejects.toMatchObject({ kind: 'ssrf', message: 'SSRF validation failed: requests to private/internal networks are not allowed' });
  });

  it('posts through the pinned address when allowed, never follows a redirect, and keeps the first 64 KiB', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/redirect') { res.writeHead(302, { location: '/big' }); res.end('moved'); return; }
      res.writeHead(200); res.end('x'.repeat(100_000));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const resolve = async (): Promise<string[]> => ['127.0.0.1'];
      const big = await guardedPost({ url: `http://receiver.test:${port}/big`, headers: {}, body: '{}', allowPrivate: true, resolve });
      expect({ status: big.status, length: big.body.length }).toEqual({ status: 200, length: 64 * 1024 });
      const moved = await guardedPost({ url: `http://127.0.0.1:${port}/redirect`, headers: {}, body: '{}', allowPrivate: true });
      expect(moved).toEqual({ status: 302, body: 'moved' });
      await expect(guardedPost({ url: `http://127.0.0.1:${port}/big`, headers: {}, body: '{}', allowPrivate: false })).rejects.toMatchObject({ kind: 'ssrf' });
    } finally {
      server.close();
    }
  });

  it('reports a refused connection and a timeout as transport errors', async () => {
    await expect(guardedPost({ url: 'http://127.0.0.1:1/', headers: {}, body: '{}', allowPrivate: true })).rejects.toMatchObject({ kind: 'transport' });
    const slow = createServer(() => undefined);
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const port = (slow.address() as { port: number }).port;
      await expect(guardedPost({ url: `http://127.0.0.1:${port}/`, headers: {}, body: '{}', allowPrivate: true, timeoutMs: 300 }))
        .rejects.toMatchObject({ kind: 'transport', message: 'request timed out after 300 ms' });
    } finally {
      slow.closeAllConnections();
      slow.close();
    }
  });
});

describe('guardedGet (issue 34 §2: client metadata documents)', () => {
  it('GETs under the same guard: headers come back, a body over maxBytes is cut and flagged, a redirect is not followed, private targets are refused', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.accept ?? ''}`);
      if (req.url === '/redirect') { res.writeHead(302, { location: '/doc' }); res.end(); return; }
      if (req.url === '/big') { res.writeHead(200, { 'content-type': 'application/json' }); res.end('x'.repeat(6000)); return; }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=120' }); res.end('{"a":1}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const doc = await guardedGet({ url: `http://127.0.0.1:${port}/doc`, headers: { accept: 'application/json' }, allowPrivate: true, maxBytes: 5120 });
      expect({ status: doc.status, body: doc.body, truncated: doc.truncated, type: doc.headers['content-type'], cache: doc.headers['cache-control'] })
        .toEqual({ status: 200, body: '{"a":1}', truncated: false, type: 'application/json', cache: 'max-age=120' });
      const big = await guardedGet({ url: `http://127.0.0.1:${port}/big`, headers: {}, allowPrivate: true, maxBytes: 5120 });
      expect({ truncated: big.truncated, length: big.body.length }).toEqual({ truncated: true, length: 5120 });
      const moved = await guardedGet({ url: `http://127.0.0.1:${port}/redirect`, headers: {}, allowPrivate: true });
      expect(moved.status).toBe(302);
      expect(seen).toEqual([`GET /doc application/json`, 'GET /big ', 'GET /redirect ']);
      await expect(guardedGet({ url: `http://127.0.0.1:${port}/doc`, headers: {}, allowPrivate: false })).rejects.toMatchObject({ kind: 'ssrf' });
      await expect(guardedGet({ url: `http://rebind.test:${port}/doc`, headers: {}, allowPrivate: false, resolve: async () => ['10.1.2.3'] })).rejects.toMatchObject({ kind: 'ssrf' });
      expect(seen).toHaveLength(3);
    } finally {
      server.close();
    }
  });
});
