/**
 * @module @gatehouse/rpc/grpc
 * gRPC server and client factories over the proto codecs, plus the in-process client used by
 * all-in-one mode. Every transport carries the same things: the caller's credentials and client IP
 * as metadata, `Set-Cookie` values back as trailing metadata, and AppError codes as gRPC statuses
 * (the code also travels in `x-gatehouse-error-code`, so codes without a gRPC twin survive the hop).
 */
import * as grpc from '@grpc/grpc-js';
import { AppError, codeFromGrpcStatus, isErrorCode, toAppError } from '@gatehouse/errors';
import {
  extractTraceContext, failSpan, injectTraceContext, SpanKind, tracingEnabled, withSpan, type GrpcCallObserver, type Logger,
} from '@gatehouse/observability';
import type { CallContext, HandlerMap, Protocol } from './context.ts';
import type { MethodCodec, ServiceDescriptor } from './proto.ts';
import { addReflection } from './reflection.ts';
import {
  CallMultiplexer, entriesMetadata, INTERNAL_KEY, MultiplexDrain, multiplexImplementation, multiplexServiceDefinition, MultiplexUnsupported, type CallOutcome, type FrameEntry,
} from './multiplex.ts';
import { isServed } from './typed.ts';

/** Headers forwarded from the edge to services (ARCHITECTURE §2: the gateway never asserts identity). */
// if-match / if-none-match: SCIM's conditional writes and reads (RFC 7644 §3.14); dpop: the DPoP proof (RFC 9449 §4.1)
export const FORWARDED_HEADERS = ['authorization', 'cookie', 'x-service-admin-secret', 'user-agent', 'origin', 'if-match', 'if-none-match', 'dpop'] as const;
const CLIENT_IP_KEY = 'x-gatehouse-client-ip';
const PROTOCOL_KEY = 'x-gatehouse-protocol';
const ERROR_CODE_KEY = 'x-gatehouse-error-code';
const ERROR_HEADERS_KEY = 'x-gatehouse-error-headers';
/**
 * `served` on a call from the gateway (internal token) asks whether the RPC runs real code: the
 * answer is OK (empty) or UNIMPLEMENTED, and no handler runs (see {@link ServiceClient.served}).
 */
const PROBE_KEY = 'x-gatehouse-probe';

/** A uniform client over any transport. */
export interface ServiceClient {
  /**
   * Calls one RPC. `req` is normalised against the proto; the response comes back full-shaped.
   * Cookies the service sets are appended to `ctx.setCookies`.
   * @throws AppError with the service's code; `unimplemented` for an unknown RPC
   */
  call(rpc: string, req: unknown, ctx: CallContext): Promise<Record<string, unknown>>;
  close(): void;
  /**
   * gRPC clients only: resolves once a connection to the service (any replica) is up, for `/readyz`.
   * @throws Error with grpc-js's reason when none comes up within `timeoutMs`
   */
  waitForReady?(timeoutMs: number): Promise<void>;
  /**
   * Whether the service serves `rpc` (false: it answers `unimplemented`), asked of the handler map
   * itself (in process) or of the service over gRPC without running the handler.
   * @throws AppError `unavailable` when the service cannot be asked
   */
  served?(rpc: string): Promise<boolean>;
}

function methodOf(desc: ServiceDescriptor, rpc: string): MethodCodec {
  const m = desc.methods.get(rpc);
  if (!m) throw new AppError('unimplemented', `${desc.service}.${rpc} is not implemented yet`);
  return m;
}

/** All-in-one transport: calls the handler directly, through the same codec as gRPC. */
export function createInProcessClient(desc: ServiceDescriptor, handlers: HandlerMap): ServiceClient {
  return {
    async call(rpc, req, ctx) {
      const method = methodOf(desc, rpc);
      const handler = handlers[rpc];
      if (!handler) throw new AppError('unimplemented', `${desc.service}.${rpc} is not implemented yet`);
      const res = await handler(method.normalizeRequest(req), ctx);
      return method.normalizeResponse(res);
    },
    close() {},
    served: async (rpc) => desc.methods.has(rpc) && isServed(handlers[rpc]),
  };
}

export interface GrpcClientOptions {
  /** `host:port`, or several comma-separated replicas (round-robin) */
  address: string;
  /** shared secret proving the caller is the gateway, so the service trusts the forwarded client IP */
  internalToken?: string;
  /**
   * With `internalToken`: carry the calls as messages on a few long-lived streams (./multiplex.ts),
   * falling back to unary calls for good when the server does not serve that (default true). false:
   * one unary call per call.
   */
  multiplex?: boolean;
}

/**
 * grpc-js channel options for a channel to every replica of one service (a headless Service's DNS
 * name, or a comma-separated list of addresses): round-robin per call over the connected replicas,
 * reconnects within 2 s, and re-resolution of the name at most once a second.
 *
 * grpc-js re-resolves a DNS name when a connection drops (a replica going away sends GOAWAY), but by
 * default no sooner than 30 s after the last resolution. In a rolling update every replica of a
 * service is replaced within seconds, so a channel that resolved at its start knew only replicas that
 * were gone, and answered UNAVAILABLE until its 30 s ran out (issue 37 §3: `helm upgrade` under load).
 */
export const REPLICA_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.keepalive_time_ms': 30000,
  // a replica that was unreachable (restarted, or a new pod not yet listening) is retried within
  // 2 s, not after grpc-js's default backoff of up to 120 s, so it gets its share of calls at once
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 2000,
  // the replicas of a rolling update are looked up again within a second of a connection dropping
  'grpc.dns_min_time_between_resolutions_ms': 1000,
};

/** Split-mode transport: a grpc-js client to the owning service (round-robin over replicas). */
export function createGrpcClient(desc: ServiceDescriptor, options: GrpcClientOptions): ServiceClient {
  const addresses = options.address.split(',').map((a) => a.trim()).filter(Boolean);
  const target = addresses.length > 1 ? `ipv4:${addresses.join(',')}` : addresses[0]!;
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), REPLICA_CHANNEL_OPTIONS);
  const multiplexer = options.internalToken && options.multiplex !== false ? new CallMultiplexer(client, options.internalToken) : undefined;
  /** One call as a grpc-js unary call: its outcome in the multiplexer's shape. */
  const unary = (path: string, payload: Buffer, entries: FrameEntry[], deadlineMs: number | undefined): Promise<CallOutcome> => new Promise((resolve) => {
    // grpc-js calls the callback before it emits 'status' (which carries the trailers with
    // Set-Cookie), so settle only once both have arrived.
    let outcome: { err: grpc.ServiceError | null; value: Buffer | undefined } | undefined;
    let trailers: grpc.Metadata | undefined;
    const settle = (): void => {
      if (!outcome || !trailers) return;
      const { err, value } = outcome;
      resolve(err ? { code: err.code, details: err.details, trailers: err.metadata ?? trailers } : { code: grpc.status.OK, details: '', value: value!, trailers });
    };
    const call = client.makeUnaryRequest(
      path, (b: Buffer) => b, (b: Buffer) => b, payload, entriesMetadata(entries),
      deadlineMs ? { deadline: new Date(deadlineMs) } : {},
      (err, value) => { outcome = { err, value }; settle(); },
    );
    call.on('status', (s: grpc.StatusObject) => { trailers = s.metadata; settle(); });
  });
  /** One attempt: a message on a multiplexed stream when the server serves that, else a unary call. */
  const send = async (path: string, payload: Buffer, entries: FrameEntry[], deadlineMs: number | undefined): Promise<CallOutcome> => {
    if (!multiplexer?.supported) return unary(path, payload, entries, deadlineMs);
    try {
      return await multiplexer.call(path, payload, entries, deadlineMs ? Math.max(1, deadlineMs - Date.now()) : 0);
    } catch (e) {
      if (!(e instanceof MultiplexUnsupported)) throw e;
      return unary(path, payload, entries, deadlineMs);
    }
  };
  const waitForReady = (timeoutMs: number): Promise<void> => new Promise<void>((resolve, reject) => {
    client.waitForReady(Date.now() + Math.max(0, timeoutMs), (err) => (err ? reject(err) : resolve()));
  });
  return {
    async call(rpc, req, ctx) {
      const method = methodOf(desc, rpc);
      const payload = method.encodeRequest(method.normalizeRequest(req));
      const entries: FrameEntry[] = [];
      for (const key of FORWARDED_HEADERS) {
        const v = ctx.headers[key];
        if (v) entries.push({ key, value: v });
      }
      entries.push({ key: CLIENT_IP_KEY, value: ctx.clientIp }, { key: PROTOCOL_KEY, value: ctx.protocol });
      if (options.internalToken) entries.push({ key: INTERNAL_KEY, value: options.internalToken });
      // a client span whose context rides in the metadata (`traceparent`, W3C Trace Context)
      return withSpan(method.path, { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.service': desc.service, 'rpc.method': rpc } }, async () => {
        injectTraceContext((key, value) => entries.push({ key, value }));
        let outcome = await send(method.path, payload, entries, ctx.deadlineMs);
        // a read whose connection was lost goes again, to a replica that is up (issue 37 §4): the
        // channel's round-robin picks only connected replicas, and a service that restarted a moment
        // ago is waited for briefly instead of being refused while the channel is in its backoff. Up
        // to READ_RETRIES times within RETRY_READY_MS: in a rolling update the next pick can be a
        // second replica going away at the same moment
        const lostAt = Date.now();
        for (let retry = 0; retry < READ_RETRIES && lostConnection(outcome) && method.idempotent; retry++) {
          const left = Math.min(RETRY_READY_MS - (Date.now() - lostAt), ctx.deadlineMs ? ctx.deadlineMs - Date.now() : RETRY_READY_MS);
          if (left <= 0 || !(await waitForReady(left).then(() => true, () => false))) break;
          outcome = await unary(method.path, payload, entries, ctx.deadlineMs);
        }
        for (const c of outcome.trailers.get('set-cookie')) ctx.setCookies.push(String(c));
        if (lostConnection(outcome)) throw serviceUnavailable(desc, outcome);
        if (outcome.code !== grpc.status.OK) throw fromServiceError({ code: outcome.code, details: outcome.details, metadata: outcome.trailers });
        try {
          return method.decodeResponse(outcome.value!);
        } catch (e) {
          throw toAppError(e);
        }
      });
    },
    close() { multiplexer?.close(); client.close(); },
    served: (rpc) => new Promise<boolean>((resolve, reject) => {
      const method = desc.methods.get(rpc);
      if (!method || !options.internalToken) return resolve(Boolean(method));
      const md = new grpc.Metadata();
      md.set(INTERNAL_KEY, options.internalToken);
      md.set(PROBE_KEY, 'served');
      client.makeUnaryRequest(method.path, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), md, { deadline: Date.now() + 2000 }, (err) => {
        if (!err) return resolve(true);
        if (err.code === grpc.status.UNIMPLEMENTED) return resolve(false);
        reject(new AppError('unavailable', `cannot ask ${desc.service} which RPCs it serves`, { cause: err }));
      });
    }),
    waitForReady,
  };
}

/**
 * How long a stopping gRPC server lets the calls it took finish before it cuts their connections, ms.
 * Below the chart's grace period after its preStop sleep (30 − 5 s), with room for the rest of the
 * shutdown.
 */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * How long a read whose connection was lost waits for a connected replica before its second attempt,
 * ms: long enough for a restarted service the channel is still backing off from (grpc-js reconnects
 * within {@link createGrpcClient}'s 2 s maximum backoff, usually far sooner), short enough that a read
 * of a service that is down answers 503 within about a second.
 */
export const RETRY_READY_MS = 1000;

/** How many times a read whose connection was lost is sent again (within {@link RETRY_READY_MS}). */
export const READ_RETRIES = 2;

/**
 * grpc-js's words for an HTTP/2 stream that closed (RST_STREAM with NO_ERROR, or the connection ending
 * under it) before the server sent a gRPC status: reported as INTERNAL, though no service answered.
 */
const ENDED_WITHOUT_STATUS = 'Call ended without gRPC status';

/**
 * Whether an attempt failed for want of a connection rather than by the service's answer: UNAVAILABLE
 * (no replica connected, or the connection dropped), CANCELLED (the server reset the stream as it
 * went down; this client never cancels a call itself) or grpc-js's INTERNAL for a stream that ended
 * with no gRPC status (seen from a pod killed under load, issue 37 §4), without a Gatehouse error code
 * in the trailers (a service's own `unavailable` answer, such as its OpenFGA server being down, carries one).
 */
export function lostConnection(outcome: Pick<CallOutcome, 'code' | 'details' | 'trailers'>): boolean {
  const lost = outcome.code === grpc.status.UNAVAILABLE || outcome.code === grpc.status.CANCELLED
    || (outcome.code === grpc.status.INTERNAL && outcome.details.includes(ENDED_WITHOUT_STATUS));
  return lost && outcome.trailers.get(ERROR_CODE_KEY).length === 0;
}

/** The `unavailable` (HTTP 503, gRPC UNAVAILABLE) answer for a call no replica of `desc`'s service took. */
export function serviceUnavailable(desc: ServiceDescriptor, outcome: Pick<CallOutcome, 'code' | 'details'>): AppError {
  const service = desc.service.split('.')[0]!;
  return new AppError('unavailable', `the ${service} service is unavailable, please try again later`, {
    headers: { 'Retry-After': '1' },
    cause: new Error(`${grpc.status[outcome.code] ?? outcome.code}: ${outcome.details}`),
  });
}

function fromServiceError(err: Pick<grpc.ServiceError, 'code' | 'details' | 'metadata'>): AppError {
  const code = err.metadata?.get(ERROR_CODE_KEY)[0];
  const headersRaw = err.metadata?.get(ERROR_HEADERS_KEY)[0];
  const headers = headersRaw ? (JSON.parse(String(headersRaw)) as Record<string, string>) : undefined;
  if (err.code === grpc.status.DEADLINE_EXCEEDED && !code) return new AppError('deadline_exceeded', 'deadline exceeded', { cause: err });
  const resolved = isErrorCode(String(code ?? '')) ? (String(code) as ReturnType<typeof codeFromGrpcStatus>) : codeFromGrpcStatus(err.code);
  return new AppError(resolved, err.details || 'internal error', headers ? { headers } : {});
}

export interface ServedService {
  desc: ServiceDescriptor;
  handlers: HandlerMap;
  /**
   * A service-to-service API (`<service>.internal`): only callers presenting the internal token
   * reach it; anyone else gets `permission_denied` before a handler runs.
   */
  internal?: boolean;
}

export interface GrpcServerOptions {
  host: string;
  port: number;
  services: ServedService[];
  logger: Logger;
  /**
   * Per-client-IP admission (behaviour.md §10: the rate limit applies on native gRPC too).
   * Resolves false to refuse with RESOURCE_EXHAUSTED.
   */
  admit?: (clientIp: string) => Promise<boolean>;
  /** when set, `x-gatehouse-internal` equal to it lets the caller forward client IP and protocol */
  internalToken?: string;
  /** `grpc` for the public port; services behind the gateway keep what the gateway forwarded */
  defaultProtocol?: Protocol;
  /** told of every answered call (the `gatehouse_grpc_server_*` metrics of @gatehouse/observability) */
  observe?: GrpcCallObserver;
  /** serve gRPC server reflection for `services` (the public port only; ./reflection.ts) */
  reflection?: boolean;
}

function peerIp(peer: string): string {
  // `ipv4:1.2.3.4:5678`, `ipv6:[::1]:5678`, or `1.2.3.4:5678`
  const stripped = peer.replace(/^ipv[46]:/, '');
  const m = /^\[(.*)\]:\d+$/.exec(stripped) ?? /^(.*):\d+$/.exec(stripped);
  const ip = m ? m[1]! : stripped;
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

/** Builds the grpc-js service definition for one descriptor with raw (Buffer) framing. */
export function rawServiceDefinition(desc: ServiceDescriptor): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  for (const m of desc.methods.values()) {
    def[m.name] = {
      path: m.path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    };
  }
  return def as grpc.ServiceDefinition;
}

/** An AppError as a gRPC status: its status code and message, its `code` (and headers) in the trailers. */
export function errorToGrpc(err: AppError): Partial<grpc.StatusObject> {
  const md = new grpc.Metadata();
  md.set(ERROR_CODE_KEY, err.code);
  if (err.headers) md.set(ERROR_HEADERS_KEY, JSON.stringify(err.headers));
  return { code: err.grpcStatus, details: err.message, metadata: md };
}

/**
 * `answer`, wrapped to tell `observe` of the call's status code and its duration in seconds from
 * now (the call's arrival); `answer` itself when there is no observer.
 */
export function observedAnswer(answer: grpc.sendUnaryData<Buffer>, path: string, observe: GrpcCallObserver | undefined): grpc.sendUnaryData<Buffer> {
  if (observe === undefined) return answer;
  const start = performance.now();
  return (err, value, trailer, flags) => {
    observe(path, err ? (err.code ?? grpc.status.UNKNOWN) : grpc.status.OK, (performance.now() - start) / 1000);
    answer(err, value, trailer, flags);
  };
}

/** The first value of a metadata key as text, or undefined. */
function metadataText(md: grpc.Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
}

/** Builds the unary handler implementations of one service for a grpc-js server. */
export function grpcImplementation(served: ServedService, opts: Omit<GrpcServerOptions, 'host' | 'port' | 'services'>): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const method of served.desc.methods.values()) {
    impl[method.name] = (call: grpc.ServerUnaryCall<Buffer, Buffer>, answer: grpc.sendUnaryData<Buffer>) => {
      if (call.metadata.get(PROBE_KEY)[0] === 'served' && opts.internalToken && call.metadata.get(INTERNAL_KEY)[0] === opts.internalToken) {
        answer(isServed(served.handlers[method.name]) ? null : { code: grpc.status.UNIMPLEMENTED, details: 'not served' }, Buffer.alloc(0));
        return;
      }
      const callback = observedAnswer(answer, method.path, opts.observe);
      const md = call.metadata;
      // the caller's trace continues here when its metadata carries a `traceparent`
      const parent = tracingEnabled() ? extractTraceContext({ traceparent: metadataText(md, 'traceparent'), tracestate: metadataText(md, 'tracestate') }) : undefined;
      void withSpan(method.path, { kind: SpanKind.SERVER, ...(parent ? { parent } : {}), attributes: { 'rpc.system': 'grpc', 'rpc.service': served.desc.service, 'rpc.method': method.name } }, async (span) => {
        const trusted = Boolean(opts.internalToken) && md.get(INTERNAL_KEY)[0] === opts.internalToken;
        const headers: Record<string, string> = {};
        for (const key of FORWARDED_HEADERS) {
          const v = md.get(key)[0];
          if (v !== undefined) headers[key] = String(v);
        }
        const clientIp = trusted && md.get(CLIENT_IP_KEY)[0] ? String(md.get(CLIENT_IP_KEY)[0]) : peerIp(call.getPeer());
        const protocol = (trusted && md.get(PROTOCOL_KEY)[0] ? String(md.get(PROTOCOL_KEY)[0]) : opts.defaultProtocol ?? 'grpc') as Protocol;
        const deadline = call.getDeadline();
        const ctx: CallContext = {
          headers,
          clientIp,
          protocol,
          setCookies: [],
          ...(deadline instanceof Date ? { deadlineMs: deadline.getTime() } : typeof deadline === 'number' && Number.isFinite(deadline) ? { deadlineMs: deadline } : {}),
        };
        const trailer = new grpc.Metadata();
        try {
          if (served.internal && !trusted) throw new AppError('permission_denied', 'internal API: the caller is not a Gatehouse service');
          if (opts.admit && !trusted && !(await opts.admit(clientIp))) {
            throw new AppError('resource_exhausted', 'too many requests, please try again later', { headers: { 'Retry-After': '1' } });
          }
          const handler = served.handlers[method.name];
          if (!handler) throw new AppError('unimplemented', `${served.desc.service}.${method.name} is not implemented yet`);
          const req = method.decodeRequest(call.request);
          const res = await handler(req, ctx);
          for (const c of ctx.setCookies) trailer.add('set-cookie', c);
          callback(null, method.encodeResponse(res as Record<string, unknown>), trailer);
        } catch (e) {
          const err = toAppError(e);
          if (err.code === 'internal') opts.logger.error({ err: e, rpc: method.name }, 'rpc failed');
          else opts.logger.debug({ code: err.code, rpc: method.name }, 'rpc refused');
          failSpan(span, err.code);
          const status = errorToGrpc(err);
          for (const c of ctx.setCookies) status.metadata!.add('set-cookie', c);
          callback(status, null);
        }
      });
    };
  }
  return impl;
}

/** Starts a grpc-js server for the given services. Resolves with the bound port. */
export async function startGrpcServer(opts: GrpcServerOptions): Promise<{ port: number; close(): Promise<void>; server: grpc.Server }> {
  // Connections are recycled every 5 minutes so clients re-resolve DNS and spread load onto
  // replicas an autoscaler added (grpc-js resolves a name again only when a connection closes).
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 4 * 1024 * 1024,
    'grpc.max_connection_age_ms': 300_000,
    'grpc.max_connection_age_grace_ms': 30_000,
  });
  const byPath = new Map<string, grpc.handleUnaryCall<Buffer, Buffer>>();
  for (const served of opts.services) {
    const impl = grpcImplementation(served, opts);
    server.addService(rawServiceDefinition(served.desc), impl);
    for (const m of served.desc.methods.values()) byPath.set(m.path, impl[m.name] as grpc.handleUnaryCall<Buffer, Buffer>);
  }
  // the gateway's and the services' calls to this server, multiplexed on streams (internal token only)
  const drain = new MultiplexDrain();
  if (opts.internalToken) server.addService(multiplexServiceDefinition(), multiplexImplementation(byPath, opts.internalToken, drain));
  if (opts.reflection) addReflection(server, opts.services.map((s) => s.desc));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return {
    port,
    server,
    close: () => new Promise<void>((resolve) => {
      // GOAWAY to every client (no new calls here), the call streams ended as their calls are
      // answered, then the connections closed; whatever is still open after SHUTDOWN_GRACE_MS is cut
      const t = setTimeout(() => { server.forceShutdown(); resolve(); }, SHUTDOWN_GRACE_MS);
      server.tryShutdown(() => { clearTimeout(t); resolve(); });
      drain.drain();
    }),
  };
}
