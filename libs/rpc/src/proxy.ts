/**
 * @module @gatehouse/rpc/proxy
 * The public gRPC port in split mode (ARCHITECTURE §3): each call is forwarded, by method path, to
 * the service that owns it, byte for byte. The caller's metadata passes through; the gateway adds the
 * client IP and its internal token; trailers (Set-Cookie) and error statuses come back unchanged,
 * except a lost connection: a read is retried on another replica, anything else answers UNAVAILABLE.
 */
import * as grpc from '@grpc/grpc-js';
import type { GrpcCallObserver, Logger } from '@gatehouse/observability';
import { errorToGrpc, lostConnection, observedAnswer, rawServiceDefinition, REPLICA_CHANNEL_OPTIONS, RETRY_READY_MS, serviceUnavailable } from './grpc.ts';
import { addReflection } from './reflection.ts';
import type { ServiceDescriptor } from './proto.ts';

export interface GrpcProxyOptions {
  host: string;
  port: number;
  /** each descriptor with the address(es) of its service (`host:port`, comma-separated replicas) */
  upstreams: Array<{ desc: ServiceDescriptor; address: string }>;
  internalToken: string;
  logger: Logger;
  admit?: (clientIp: string) => Promise<boolean>;
  /** told of every answered call (the `gatehouse_grpc_server_*` metrics of @gatehouse/observability) */
  observe?: GrpcCallObserver;
}


function peerIp(peer: string): string {
  const stripped = peer.replace(/^ipv[46]:/, '');
  const m = /^\[(.*)\]:\d+$/.exec(stripped) ?? /^(.*):\d+$/.exec(stripped);
  const ip = m ? m[1]! : stripped;
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

/** One forwarded call's end: its status code and details, its trailers, and the answer when OK. */
interface Forwarded { code: grpc.status; details: string; trailers: grpc.Metadata; value?: Buffer }

/**
 * Sends one call upstream, byte for byte, and resolves (never rejects) once both its answer and its
 * trailers are in; an error's trailers are the ones its status carried.
 */
function forward(client: grpc.Client, path: string, request: Buffer, md: grpc.Metadata, deadlineMs: number | undefined): Promise<Forwarded> {
  return new Promise((resolve) => {
    let trailers: grpc.Metadata | undefined;
    let outcome: { err: grpc.ServiceError | null; value?: Buffer } | undefined;
    const finish = (): void => {
      if (!outcome || !trailers) return;
      if (outcome.err) resolve({ code: outcome.err.code, details: outcome.err.details, trailers: outcome.err.metadata ?? trailers });
      else resolve({ code: grpc.status.OK, details: '', trailers, ...(outcome.value ? { value: outcome.value } : {}) });
    };
    const upstream = client.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, request, md,
      deadlineMs === undefined ? {} : { deadline: deadlineMs },
      (err, value) => { outcome = err ? { err } : { err: null, ...(value ? { value } : {}) }; finish(); });
    upstream.on('status', (s: grpc.StatusObject) => { trailers = s.metadata; finish(); });
  });
}

/**
 * Starts the forwarding server; resolves with the bound port. A read (an RPC whose proto says
 * `idempotency_level = NO_SIDE_EFFECTS` or `IDEMPOTENT`) whose replica went away mid-call is sent once
 * more to another; a call no replica took answers UNAVAILABLE `the <service> service is unavailable`.
 */
export async function startGrpcProxy(opts: GrpcProxyOptions): Promise<{ port: number; close(): Promise<void> }> {
  const server = new grpc.Server();
  const clients: grpc.Client[] = [];
  for (const { desc, address } of opts.upstreams) {
    const addresses = address.split(',').map((a) => a.trim()).filter(Boolean);
    const target = addresses.length > 1 ? `ipv4:${addresses.join(',')}` : addresses[0]!;
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), REPLICA_CHANNEL_OPTIONS);
    clients.push(client);
    const impl: grpc.UntypedServiceImplementation = {};
    for (const method of desc.methods.values()) {
      impl[method.name] = (call: grpc.ServerUnaryCall<Buffer, Buffer>, answer: grpc.sendUnaryData<Buffer>) => {
        const callback = observedAnswer(answer, method.path, opts.observe);
        void (async () => {
          const clientIp = peerIp(call.getPeer());
          if (opts.admit && !(await opts.admit(clientIp).catch(() => true))) {
            const md = new grpc.Metadata();
            md.set('x-gatehouse-error-code', 'resource_exhausted');
            callback({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'too many requests, please try again later', metadata: md }, null);
            return;
          }
          const md = call.metadata.clone();
          md.remove('x-gatehouse-internal');
          md.set('x-gatehouse-client-ip', clientIp);
          md.set('x-gatehouse-protocol', 'grpc');
          md.set('x-gatehouse-internal', opts.internalToken);
          const deadline = call.getDeadline();
          const deadlineMs = deadline instanceof Date ? deadline.getTime() : typeof deadline === 'number' && Number.isFinite(deadline) ? deadline : undefined;
          let result = await forward(client, method.path, call.request, md, deadlineMs);
          // issue 37 §4, as on /v1 and /graphql (grpc.ts): a read whose connection was lost goes once more,
          // to a replica that is up, waiting up to RETRY_READY_MS for one; a write is never sent twice
          if (lostConnection(result) && method.idempotent) {
            const wait = Math.min(RETRY_READY_MS, deadlineMs === undefined ? RETRY_READY_MS : deadlineMs - Date.now());
            const ready = await new Promise<boolean>((resolve) => client.waitForReady(Date.now() + Math.max(0, wait), (err) => resolve(!err)));
            if (ready) result = await forward(client, method.path, call.request, md, deadlineMs);
          }
          if (lostConnection(result)) {
            // no replica took it: UNAVAILABLE naming the service, as the REST answer, not a bare CANCELLED
            callback(errorToGrpc(serviceUnavailable(desc, result)), null);
          } else if (result.code !== grpc.status.OK) {
            callback({ code: result.code, details: result.details, metadata: result.trailers }, null);
          } else {
            callback(null, result.value ?? Buffer.alloc(0), result.trailers);
          }
        })();
      };
    }
    server.addService(rawServiceDefinition(desc), impl);
  }
  // answered here, not forwarded: the gateway knows the public protos
  addReflection(server, opts.upstreams.map((u) => u.desc));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  opts.logger.info({ port }, 'grpc proxy listening');
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      for (const c of clients) c.close();
      const t = setTimeout(() => { server.forceShutdown(); resolve(); }, 2000);
      server.tryShutdown(() => { clearTimeout(t); resolve(); });
    }),
  };
}
