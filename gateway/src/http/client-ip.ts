/** @module gateway/http/client-ip Client IP and effective host under `--trusted-proxies` (spec §1, §5 CSRF; behaviour.md §2.5). */
import { BlockList, isIP } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { AppError } from '@gatehouse/errors';

/** What the gateway believes about the caller of one request. */
export interface ClientInfo {
  /** the client IP: the socket peer, or the right-most untrusted `X-Forwarded-For` hop behind a trusted proxy */
  readonly ip: string;
  /** `host[:port]` the client addressed: `Host`, or `X-Forwarded-Host` when the peer is a trusted proxy */
  readonly host: string;
  /** `http` or `https`: the socket's, or `X-Forwarded-Proto` from a trusted proxy */
  readonly proto: string;
  /** whether the socket peer is inside `--trusted-proxies` */
  readonly viaTrustedProxy: boolean;
}

/** Strips IPv6 zone/brackets, ports on IPv4, and un-maps `::ffff:a.b.c.d` to `a.b.c.d`. Returns undefined when not an IP. */
export function normaliseIp(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let v = value.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(v);
  if (bracketed) v = bracketed[1] ?? '';
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(v)) v = v.slice(0, v.lastIndexOf(':'));
  const zone = v.indexOf('%');
  if (zone !== -1) v = v.slice(0, zone);
  const family = isIP(v);
  if (family === 0) return undefined;
  if (family === 6) {
    const mapped = /^(?:::|(?:0{1,4}:){5})ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(v);
    if (mapped?.[1] && isIP(mapped[1]) === 4) return mapped[1];
    return v.toLowerCase();
  }
  return v;
}

/** The `--trusted-proxies` set; `contains` answers for IPv4, IPv6 and IPv4-mapped IPv6 addresses. */
export interface TrustedProxies {
  contains(ip: string): boolean;
  readonly empty: boolean;
}

/**
 * Compiles `--trusted-proxies` CIDRs (`10.0.0.0/8`, `fd00::/8`; a bare address means /32 or /128)
 * into a node:net BlockList.
 * @throws AppError `invalid_argument` `--trusted-proxies: invalid CIDR "<value>"` (behaviour.md §1.4 wording)
 */
export function compileTrustedProxies(cidrs: readonly string[]): TrustedProxies {
  const list = new BlockList();
  let count = 0;
  for (const entry of cidrs) {
    const raw = entry.trim();
    if (raw === '') continue;
    const [addrPart, prefixPart, ...extra] = raw.split('/');
    const addr = normaliseIp(addrPart);
    const family = addr === undefined ? 0 : isIP(addr);
    const maxPrefix = family === 4 ? 32 : 128;
    let prefix = prefixPart === undefined ? maxPrefix : Number(prefixPart);
    // "::ffff:10.0.0.0/104" un-maps to IPv4; shift its prefix into the IPv4 range.
    if (family === 4 && addrPart !== undefined && addrPart.includes(':') && prefixPart !== undefined) prefix -= 96;
    const badPrefix = prefixPart !== undefined && !/^\d{1,3}$/.test(prefixPart);
    if (addr === undefined || extra.length > 0 || badPrefix || !Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix) {
      throw new AppError('invalid_argument', `--trusted-proxies: invalid CIDR "${raw}"`);
    }
    list.addSubnet(addr, prefix, family === 4 ? 'ipv4' : 'ipv6');
    count++;
  }
  return {
    empty: count === 0,
    contains(ip: string): boolean {
      if (count === 0) return false;
      const n = normaliseIp(ip);
      if (n === undefined) return false;
      return list.check(n, isIP(n) === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * Resolves the client IP. Without a trusted peer, `X-Forwarded-For` is ignored (spec §9, security
 * release). From a trusted peer the chain `XFF..., peer` is walked right to left, skipping trusted
 * proxies; the first untrusted hop is the client. A malformed hop stops the walk at the last trusted
 * hop; a fully trusted chain yields its left-most hop.
 */
export function resolveClientIp(peer: string | undefined, xff: string | string[] | undefined, trusted: TrustedProxies): string {
  const peerIp = normaliseIp(peer) ?? '0.0.0.0';
  if (xff === undefined || !trusted.contains(peerIp)) return peerIp;
  const hops = (Array.isArray(xff) ? xff.join(',') : xff).split(',').map((h) => h.trim()).filter((h) => h !== '');
  let current = peerIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = normaliseIp(hops[i]);
    if (hop === undefined) return current;
    current = hop;
    if (!trusted.contains(hop)) return hop;
  }
  return current;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  const first = v?.split(',')[0]?.trim();
  return first === '' ? undefined : first;
}

/**
 * Per-socket and per-request slots. Symbol-keyed properties rather than WeakMaps: a WeakMap entry per
 * request is an ephemeron every minor GC has to trace (measured by services/authz/bench/pipeline-bench.ts).
 */
const PEER_IP = Symbol('gatehouse.peerIp');
const CLIENT_INFO = Symbol('gatehouse.clientInfo');
type WithPeer = Request['socket'] & { [PEER_IP]?: string };
type WithInfo = Request & { [CLIENT_INFO]?: ClientInfo };

/** The normalised peer address of a connection, computed once per socket (keep-alive carries many requests). */
function peerIp(socket: WithPeer): string {
  let ip = socket[PEER_IP];
  if (ip === undefined) {
    ip = normaliseIp(socket.remoteAddress) ?? '0.0.0.0';
    if (socket.remoteAddress !== undefined) socket[PEER_IP] = ip;
  }
  return ip;
}

/** Computes {@link ClientInfo} for one request (pure apart from reading `req`). */
export function computeClientInfo(req: Request, trusted: TrustedProxies): ClientInfo {
  const peer = peerIp(req.socket);
  const viaTrustedProxy = trusted.contains(peer);
  const xff = req.headers['x-forwarded-for'];
  const ip = viaTrustedProxy && xff !== undefined ? resolveClientIp(peer, xff, trusted) : peer;
  const socketProto = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  const fwdHost = viaTrustedProxy ? firstValue(req.headers['x-forwarded-host']) : undefined;
  const fwdProto = viaTrustedProxy ? firstValue(req.headers['x-forwarded-proto'])?.toLowerCase() : undefined;
  return {
    ip,
    host: (fwdHost ?? req.headers.host ?? '').toLowerCase(),
    proto: fwdProto === 'https' || fwdProto === 'http' ? fwdProto : socketProto,
    viaTrustedProxy,
  };
}

/** Middleware that resolves {@link ClientInfo} once per request; read it with {@link clientInfo}. */
export function clientIpMiddleware(trusted: TrustedProxies): RequestHandler {
  return (req, _res, next) => {
    (req as WithInfo)[CLIENT_INFO] = computeClientInfo(req, trusted);
    next();
  };
}

/**
 * The resolved caller of `req`. Before (or without) {@link clientIpMiddleware} it falls back to the
 * socket peer and the `Host` header, trusting no proxy.
 */
export function clientInfo(req: Request): ClientInfo {
  return (req as WithInfo)[CLIENT_INFO] ?? computeClientInfo(req, NO_PROXIES);
}

const NO_PROXIES: TrustedProxies = { empty: true, contains: () => false };
