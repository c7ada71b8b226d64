import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import express from 'express';
import { clientInfo, clientIpMiddleware, compileTrustedProxies, normaliseIp, resolveClientIp } from './client-ip.ts';
import { listen, send, type RunningApp } from './test-server.ts';

describe('normaliseIp', () => {
  it('un-maps IPv4-mapped IPv6 and strips brackets, ports and zones', () => {
    expect(normaliseIp('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(normaliseIp('0:0:0:0:0:ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(normaliseIp('[2001:DB8::1]:443')).toBe('2001:db8::1');
    expect(normaliseIp('192.0.2.7:5555')).toBe('192.0.2.7');
    expect(normaliseIp('fe80::1%eth0')).toBe('fe80::1');
    expect(normaliseIp('unknown')).toBeUndefined();
  });
});

describe('compileTrustedProxies', () => {
  const t = compileTrustedProxies(['10.0.0.0/8', '2001:db8::/32', '192.0.2.1']);
  it('matches IPv4, IPv6, IPv4-mapped IPv6 and bare addresses', () => {
    expect(t.contains('10.200.0.1')).toBe(true);
    expect(t.contains('::ffff:10.0.0.9')).toBe(true);
    expect(t.contains('11.0.0.1')).toBe(false);
    expect(t.contains('2001:db8:ffff::1')).toBe(true);
    expect(t.contains('2001:db9::1')).toBe(false);
    expect(t.contains('192.0.2.1')).toBe(true);
    expect(t.contains('192.0.2.2')).toBe(false);
  });
  it('rejects invalid CIDRs with the startup message', () => {
    for (const bad of ['10.0.0.0/33', 'nonsense', '10.0.0.0/8/1', '::/129', '10.0.0.0/x']) {
      expect(() => compileTrustedProxies([bad])).toThrow(new AppError('invalid_argument', `--trusted-proxies: invalid CIDR "${bad}"`));
    }
  });
  it('trusts nothing by default', () => {
    expect(compileTrustedProxies([]).contains('127.0.0.1')).toBe(false);
  });
});

describe('resolveClientIp (right-to-left X-Forwarded-For walk)', () => {
  const t = compileTrustedProxies(['10.0.0.0/8']);
  it('ignores X-Forwarded-For from an untrusted peer', () => {
    expect(resolveClientIp('203.0.113.9', '1.1.1.1', t)).toBe('203.0.113.9');
  });
  it('returns the right-most untrusted hop', () => {
    expect(resolveClientIp('10.0.0.1', '6.6.6.6, 198.51.100.4, 10.0.0.2', t)).toBe('198.51.100.4');
  });
  it('returns the left-most hop when every hop is trusted', () => {
    expect(resolveClientIp('10.0.0.1', '10.0.0.3, 10.0.0.2', t)).toBe('10.0.0.3');
  });
  it('stops at a malformed hop and keeps the last trusted one', () => {
    expect(resolveClientIp('10.0.0.1', '1.2.3.4, garbage, 10.0.0.2', t)).toBe('10.0.0.2');
  });
  it('handles repeated headers and IPv6 hops', () => {
    expect(resolveClientIp('::ffff:10.0.0.1', ['2001:db8::7', '10.0.0.2'], t)).toBe('2001:db8::7');
  });
});

describe('client IP middleware on a real socket (peer 127.0.0.1)', () => {
  const echo = (trusted: string[]) => {
    const app = express();
    app.use(clientIpMiddleware(compileTrustedProxies(trusted)));
    app.get('/ip', (req, res) => {
      res.json(clientInfo(req));
    });
    return app;
  };
  let untrusted: RunningApp;
  let trusted: RunningApp;
  beforeAll(async () => {
    untrusted = await listen(echo([]));
    trusted = await listen(echo(['127.0.0.0/8']));
  });
  afterAll(async () => {
    await untrusted.close();
    await trusted.close();
  });

  it('ignores X-Forwarded-For and X-Forwarded-Host by default', async () => {
    const res = await send(untrusted.base, 'GET', '/ip', { headers: { host: 'gate:1', 'x-forwarded-for': '198.51.100.1', 'x-forwarded-host': 'evil', 'x-forwarded-proto': 'https' } });
    expect(res.json).toEqual({ ip: '127.0.0.1', host: 'gate:1', proto: 'http', viaTrustedProxy: false });
  });

  it('honours them when the peer is inside --trusted-proxies', async () => {
    const res = await send(trusted.base, 'GET', '/ip', { headers: { host: 'gate:1', 'x-forwarded-for': '198.51.100.1, 127.0.0.5', 'x-forwarded-host': 'Public.Example, inner', 'x-forwarded-proto': 'https' } });
    expect(res.json).toEqual({ ip: '198.51.100.1', host: 'public.example', proto: 'https', viaTrustedProxy: true });
  });
});
