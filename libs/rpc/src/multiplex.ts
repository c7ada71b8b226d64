/**
 * @module @gatehouse/rpc/multiplex
 * Unary calls between Gatehouse processes carried as messages on a few long-lived gRPC streams
 * (`gatehouse.common.v1.CallMultiplexService/Calls`, proto/gatehouse/common/v1/multiplex.proto), issue
 * 22 §2. grpc-js spends ≈ 150–180 µs of CPU (client and server together) on a unary call: a new HTTP/2
 * stream with its headers and trailers, a resolving, load-balancing and subchannel call object per
 * side, interceptors, a status. A message on an open bidirectional stream costs ≈ 20 µs
 * (`test/bench/grpc-multiplex-bench.ts`). The server answers each message with the same handler
 * implementation as the unary call (`grpcImplementation` in ./grpc.ts): same metadata, guard, metrics,
 * status codes and trailers, so what a caller sees does not depend on the transport.
 *
 * Only callers holding the internal token may open the stream (it is the gateway → service and
 * service → service path); the public gRPC port never serves it. A server that does not know the
 * method (an older version during a rolling upgrade) answers UNIMPLEMENTED before reading a
 * message, and the client then goes back to unary calls for good.
 */
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { PROTO_ROOT } from './proto.ts';

/** gRPC path of the multiplexing method. */
export const MULTIPLEX_PATH = '/gatehouse.common.v1.CallMultiplexService/Calls';
/** The metadata key carrying the internal token (the same as on a unary call). */
export const INTERNAL_KEY = 'x-gatehouse-internal';

/** One metadata entry as it travels in a frame. */
export interface FrameEntry {
  key: string;
  value: string;
}

interface CallsRequest {
  id: number;
  method: string;
  metadata: FrameEntry[];
  payload: Uint8Array;
  timeout_ms: number;
}

interface CallsResponse {
  id: number;
  status: number;
  details: string;
  payload: Uint8Array;
  trailers: FrameEntry[];
}

let codecs: { request: protobuf.Type; response: protobuf.Type } | undefined;

/** The frame types, loaded from the proto on first use (keepCase, like every Gatehouse proto). */
function frameTypes(): { request: protobuf.Type; response: protobuf.Type } {
  if (codecs) return codecs;
  const root = new protobuf.Root().loadSync(path.join(PROTO_ROOT, 'gatehouse/common/v1/multiplex.proto'), { keepCase: true });
  codecs = { request: root.lookupType('gatehouse.common.v1.CallsRequest'), response: root.lookupType('gatehouse.common.v1.CallsResponse') };
  return codecs;
}

const asBuffer = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));

/** grpc-js metadata as frame entries (text values; `-bin` values are not carried). */
export function metadataEntries(md: grpc.Metadata | undefined): FrameEntry[] {
  const out: FrameEntry[] = [];
  if (!md) return out;
  for (const [key, values] of Object.entries(md.toJSON())) {
    if (key.endsWith('-bin')) continue;
    for (const v of values) out.push({ key, value: String(v) });
  }
  return out;
}

/** Frame entries as grpc-js metadata. */
export function entriesMetadata(entries: readonly FrameEntry[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const e of entries) md.add(e.key, e.value);
  return md;
}

/** A unary handler as grpc-js calls it (what `grpcImplementation` builds). */
type UnaryImpl = (call: grpc.ServerUnaryCall<Buffer, Buffer>, answer: grpc.sendUnaryData<Buffer>) => void;

/** The grpc-js service definition of the multiplexing method, raw frames. */
export function multiplexServiceDefinition(): grpc.ServiceDefinition {
  const raw = (b: Buffer): Buffer => b;
  return {
    Calls: { path: MULTIPLEX_PATH, requestStream: true, responseStream: true, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw },
  } as grpc.ServiceDefinition;
}

/**
 * The server side: answers every call frame on a stream with the unary implementation registered for
 * its method (keyed by full path), in completion order. The stream must carry the internal token
 * (`internalToken`), else it ends PERMISSION_DENIED; each call then runs as a trusted unary call from
 * the same peer, with its deadline `timeout_ms` from its arrival. An unknown method answers that call
 * UNIMPLEMENTED; a frame that does not decode ends the stream INVALID_ARGUMENT.
 */
export function multiplexImplementation(byPath: ReadonlyMap<string, UnaryImpl>, internalToken: string, drain?: MultiplexDrain): grpc.UntypedServiceImplementation {
  return {
    Calls: (stream: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      if (!internalToken || stream.metadata.get(INTERNAL_KEY)[0] !== internalToken) {
        stream.emit('error', { code: grpc.status.PERMISSION_DENIED, details: 'internal API: the caller is not a Gatehouse service' });
        return;
      }
      const { request, response } = frameTypes();
      let inFlight = 0;
      let ended = false;
      let closed = false;
      const finish = (): void => {
        if (ended && inFlight === 0 && !closed) {
          closed = true;
          untrack?.();
          stream.end();
        }
      };
      // a stopping server ends the stream (status OK) once the calls it took are answered; the
      // client sends later calls elsewhere (its pending ones come back UNAVAILABLE, so reads retry)
      const untrack = drain?.track(() => { ended = true; finish(); });
      const reply = (frame: CallsResponse): void => {
        inFlight--;
        if (!closed && !stream.cancelled) stream.write(Buffer.from(response.encode(frame).finish()));
        finish();
      };
      stream.on('data', (buf: Buffer) => {
        if (closed) return; // a call that reached an ended stream is not run: its caller sees UNAVAILABLE
        let frame: CallsRequest;
        try {
          frame = request.decode(buf) as unknown as CallsRequest;
        } catch {
          closed = true;
          stream.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'malformed call frame' });
          return;
        }
        inFlight++;
        const id = frame.id;
        const impl = byPath.get(frame.method);
        if (impl === undefined) {
          reply({ id, status: grpc.status.UNIMPLEMENTED, details: `The server does not implement the method ${frame.method}`, payload: Buffer.alloc(0), trailers: [] });
          return;
        }
        const metadata = entriesMetadata(frame.metadata);
        metadata.set(INTERNAL_KEY, internalToken);
        const deadline = frame.timeout_ms > 0 ? new Date(Date.now() + frame.timeout_ms) : Infinity;
        const call = { request: asBuffer(frame.payload), metadata, getPeer: () => stream.getPeer(), getDeadline: () => deadline } as unknown as grpc.ServerUnaryCall<Buffer, Buffer>;
        impl(call, (err, value, trailer) => {
          if (err) {
            const md = err.metadata instanceof grpc.Metadata ? err.metadata : undefined;
            reply({ id, status: err.code ?? grpc.status.UNKNOWN, details: err.details ?? '', payload: Buffer.alloc(0), trailers: metadataEntries(md) });
          } else {
            reply({ id, status: grpc.status.OK, details: '', payload: value ?? Buffer.alloc(0), trailers: metadataEntries(trailer) });
          }
        });
      });
      stream.on('end', () => {
        ended = true;
        finish();
      });
      // a cancelled stream drops its answers (the caller is gone); handlers still run to completion
      stream.on('error', () => {});
      stream.on('close', () => untrack?.());
    },
  };
}

/**
 * The open call streams of one server, so that a stopping server can end each of them once the calls
 * it took are answered ({@link multiplexImplementation}); streams opened after {@link drain} end the
 * same way. Without this a stream lives until its client retires it, and a shutdown deadline cuts it
 * with calls in flight.
 */
export class MultiplexDrain {
  private readonly enders = new Set<() => void>();
  private draining = false;

  /** Registers a stream's `end` (called at once while draining); returns its removal. */
  track(end: () => void): () => void {
    if (this.draining) {
      queueMicrotask(end);
      return () => {};
    }
    this.enders.add(end);
    return () => { this.enders.delete(end); };
  }

  /** Ends every open stream once its calls in flight are answered, and every stream opened later. */
  drain(): void {
    this.draining = true;
    for (const end of [...this.enders]) end();
    this.enders.clear();
  }
}

/** The outcome of one call, in the shape a unary call produces. */
export interface CallOutcome {
  /** gRPC status code (0 OK) */
  code: number;
  details: string;
  /** the serialised response when `code` is 0 */
  value?: Buffer;
  /** trailing metadata (Set-Cookie, the Gatehouse error code) */
  trailers: grpc.Metadata;
}

/** The multiplexer could not be used for this call (the server does not serve it): send it as a unary call. */
export class MultiplexUnsupported extends Error {}

interface Pending {
  resolve(outcome: CallOutcome): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/** How long one stream takes new calls before it is retired (ended once its calls are answered), ms. */
export const STREAM_TTL_MS = 2000;

/** One stream and the calls in flight on it. */
class CallStream {
  private readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private answered = false;
  /** false once retired or broken: takes no new calls */
  open = true;
  private readonly opened = performance.now();

  constructor(client: grpc.Client, internalToken: string, onUnsupported: () => void) {
    const md = new grpc.Metadata();
    md.set(INTERNAL_KEY, internalToken);
    const raw = (b: Buffer): Buffer => b;
    this.stream = client.makeBidiStreamRequest(MULTIPLEX_PATH, raw, raw, md);
    const { response } = frameTypes();
    this.stream.on('data', (buf: Buffer) => {
      this.answered = true;
      const frame = response.decode(buf) as unknown as CallsResponse;
      const p = this.pending.get(frame.id);
      if (p === undefined) return; // its deadline passed: the caller has its answer
      this.pending.delete(frame.id);
      if (p.timer) clearTimeout(p.timer);
      p.resolve({ code: frame.status, details: frame.details, value: asBuffer(frame.payload), trailers: entriesMetadata(frame.trailers) });
      this.maybeEnd();
    });
    this.stream.on('error', () => {}); // 'status' follows and settles the calls
    this.stream.on('status', (s: grpc.StatusObject) => {
      this.open = false;
      const unsupported = !this.answered && s.code === grpc.status.UNIMPLEMENTED;
      if (unsupported) onUnsupported();
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        if (p.timer) clearTimeout(p.timer);
        if (unsupported) p.reject(new MultiplexUnsupported(s.details));
        else if (s.code === grpc.status.OK) p.resolve({ code: grpc.status.UNAVAILABLE, details: 'the service ended the call stream', trailers: new grpc.Metadata() });
        else p.resolve({ code: s.code, details: s.details, trailers: new grpc.Metadata() });
      }
    });
  }

  /** True while the stream takes new calls (open and younger than {@link STREAM_TTL_MS}). */
  usable(now: number): boolean {
    if (this.open && now - this.opened > STREAM_TTL_MS) {
      this.open = false;
      this.maybeEnd();
    }
    return this.open;
  }

  private maybeEnd(): void {
    if (!this.open && this.pending.size === 0) this.stream.end();
  }

  /** Sends one call; resolves with its outcome (DEADLINE_EXCEEDED after `timeoutMs` without an answer). */
  send(method: string, payload: Buffer, metadata: FrameEntry[], timeoutMs: number): Promise<CallOutcome> {
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffff_fff0 ? 1 : this.nextId + 1;
    const { request } = frameTypes();
    return new Promise<CallOutcome>((resolve, reject) => {
      const timer = timeoutMs > 0
        ? setTimeout(() => {
          this.pending.delete(id);
          resolve({ code: grpc.status.DEADLINE_EXCEEDED, details: 'Deadline exceeded', trailers: new grpc.Metadata() });
          this.maybeEnd();
        }, timeoutMs)
        : undefined;
      this.pending.set(id, { resolve, reject, timer });
      this.stream.write(Buffer.from(request.encode({ id, method, metadata, payload, timeout_ms: timeoutMs }).finish()));
    });
  }

  /** Ends the stream (client close): calls in flight are answered first. */
  close(): void {
    this.open = false;
    this.maybeEnd();
  }
}

/**
 * The client side: `streams` streams over one grpc-js channel, used in turn; each takes new calls for
 * {@link STREAM_TTL_MS} and is then replaced by a new one, which the channel's round-robin balancer
 * puts on its next replica, so calls spread over the replicas the channel knows and reach a replica
 * that joined within seconds, and a stream never outlives a server's connection-age grace period.
 */
export class CallMultiplexer {
  private readonly slots: Array<CallStream | undefined>;
  private turn = 0;
  private unsupported = false;
  private readonly client: grpc.Client;
  private readonly internalToken: string;

  /**
   * @param client the grpc-js channel to the service (round-robin over its replicas)
   * @param internalToken proves the caller is a Gatehouse service (the server refuses the stream without it)
   * @param streams how many streams are open at once (≥ 1)
   */
  constructor(client: grpc.Client, internalToken: string, streams = 4) {
    this.client = client;
    this.internalToken = internalToken;
    this.slots = new Array<CallStream | undefined>(Math.max(1, streams)).fill(undefined);
  }

  /** False once a server answered that it does not serve the multiplexing method. */
  get supported(): boolean {
    return !this.unsupported;
  }

  /**
   * Sends one unary call as a message.
   * @param method the unary method's full path
   * @param timeoutMs time left to the call's deadline (0: none)
   * @throws MultiplexUnsupported when the server does not serve the method (send the call as a unary call)
   */
  call(method: string, payload: Buffer, metadata: FrameEntry[], timeoutMs: number): Promise<CallOutcome> {
    if (this.unsupported) return Promise.reject(new MultiplexUnsupported('not served'));
    const i = this.turn;
    this.turn = (i + 1) % this.slots.length;
    let s = this.slots[i];
    if (s === undefined || !s.usable(performance.now())) {
      s = new CallStream(this.client, this.internalToken, () => { this.unsupported = true; });
      this.slots[i] = s;
    }
    return s.send(method, payload, metadata, Math.max(0, Math.ceil(timeoutMs)));
  }

  /** Ends every stream once its calls are answered. */
  close(): void {
    for (const s of this.slots) s?.close();
    this.slots.fill(undefined);
  }
}
