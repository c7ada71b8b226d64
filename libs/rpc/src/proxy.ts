/**
 * @module @gatehouse/rpc/proxy
 * The public gRPC port in split mode (ARCHITECTURE §3): each call is forwarded, by method path, to
 * the service that owns it, byte for byte. The caller's metadata passes through; the gateway adds the
 * client IP and its internal token; trailers (Set-Cookie) and error statuses come back unchanged.
 */
import * as grpc from '@grpc/grpc-js';
import type { GrpcCallObserver, Logger } from '@gatehouse/observability';
import { observedAnswer, rawServiceDefinition } from './grpc.ts';
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

/** Starts the forwarding server; resolves with the bound port. */
export async function startGrpcProxy(opts: GrpcProxyOptions): Promise<{ port: number; close(): Promise<void> }> {
  const server = new grpc.Server();
  const clients: grpc.Client[] = [];
  for (const { desc, address } of opts.upstreams) {
    const addresses = address.split(',').map((a) => a.trim()).filter(Boolean);
    const target = addresses.length > 1 ? `ipv4:${addresses.join(',')}` : addresses[0]!;
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
      'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
    });
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
          let trailers: grpc.Metadata | undefined;
          let outcome: { err: grpc.ServiceError | null; value?: Buffer } | undefined;
          const finish = (): void => {
            if (!outcome || !trailers) return;
            if (outcome.err) {
              callback({ code: outcome.err.code, details: outcome.err.details, metadata: outcome.err.metadata }, null);
            } else {
              callback(null, outcome.value ?? Buffer.alloc(0), trailers);
            }
          };
          const upstream = client.makeUnaryRequest(method.path, (b: Buffer) => b, (b: Buffer) => b, call.request, md,
            deadline instanceof Date || typeof deadline === 'number' ? { deadline } : {},
            (err, value) => { outcome = err ? { err } : { err: null, ...(value ? { value } : {}) }; finish(); });
          upstream.on('status', (s: grpc.StatusObject) => { trailers = s.metadata; finish(); });
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
