/**
 * @module @gatehouse/rpc/local
 * All-in-one's in-process network: services built in one process serve their implementations here,
 * and clients find them by proto service name when they call, as split mode's gRPC clients find a
 * peer by address. Building order then does not matter (authn, built first, holds a client of mfa's
 * internal API before mfa exists), and a call to a service not served answers `unavailable`, as an
 * unreachable peer does in split mode.
 */
import { AppError } from '@gatehouse/errors';
import { createInProcessClient } from './grpc.ts';
import type { ServiceDescriptor } from './proto.ts';
import type { RpcTransport, ServiceImplementation } from './typed.ts';

export interface LocalNetwork {
  /** Serves an implementation to every client of its proto service. @throws Error when served twice */
  serve(impl: ServiceImplementation): void;
  /** A transport to `desc`'s service, resolved at each call. */
  transport(desc: ServiceDescriptor): RpcTransport;
}

/** Builds an empty in-process network. */
export function createLocalNetwork(): LocalNetwork {
  const served = new Map<string, RpcTransport>();
  return {
    serve(impl) {
      if (served.has(impl.desc.fullName)) throw new Error(`${impl.desc.fullName} is already served`);
      served.set(impl.desc.fullName, createInProcessClient(impl.desc, impl.handlers));
    },
    transport(desc) {
      return {
        call(rpc, req, ctx) {
          const target = served.get(desc.fullName);
          if (!target) return Promise.reject(new AppError('unavailable', `${desc.service} is not running in this process`));
          return target.call(rpc, req, ctx);
        },
        close() {},
      };
    },
  };
}
