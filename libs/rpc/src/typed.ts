/**
 * @module @gatehouse/rpc/typed
 * Handler maps and clients typed by the generated proto service interfaces (issue 14 §1). A service's
 * handler map is checked against its proto by `tsc`: a renamed, missing or mistyped RPC does not
 * compile, and neither does an internal call to an RPC its peer does not have.
 *
 * The types come from `@gatehouse/contracts` (ts-proto, `npm run generate`); the runtime stays on the
 * protobufjs codecs of ./proto.ts, which normalise every request before a handler sees it.
 */
import type { ProtoServices } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { CallContext, Handler, HandlerMap } from './context.ts';
import type { ServiceDescriptor } from './proto.ts';

/** A generated ts-proto service interface: RPC name → `(request) => Promise<response>`. */
type ProtoService = object;

/** The request type of one RPC of `S`. */
export type RequestOf<S, K extends keyof S> = S[K] extends (request: infer Req) => Promise<unknown> ? Req : never;
/** The response type of one RPC of `S`: a top-level google.protobuf.Struct is a plain JSON object on our wire. */
export type ResponseOf<S, K extends keyof S> = S[K] extends (request: never) => Promise<infer Res>
  ? Res extends { fields: { [key: string]: unknown } } ? Record<string, unknown> : Res
  : never;

/**
 * What a handler may return for response type `Res`: the fields it sets. The codec fills every field
 * it leaves out or sets to null with its proto default (behaviour.md §0.1 response nulls), so only the
 * names and the types of the fields set are checked.
 */
export type HandlerResult<Res> = Res extends object ? { [K in keyof Res]?: Res[K] | null } : Res;

/** The handler map of proto service `S`: one handler per RPC, no more, no less. */
export type HandlersOf<S extends ProtoService> = {
  [K in keyof S]-?: (request: RequestOf<S, K>, ctx: CallContext) => Promise<HandlerResult<ResponseOf<S, K>>>;
};

/** A typed client of proto service `S`, over any transport (in process, gRPC). */
export type ClientOf<S extends ProtoService> = {
  readonly [K in keyof S]-?: (request: RequestOf<S, K>, ctx: CallContext) => Promise<ResponseOf<S, K>>;
} & {
  /** Closes the transport (a no-op in process). */
  close(): void;
};

/** A proto service's full name (`gatehouse.mfa.v1.MfaService`). */
export type ProtoServiceName = keyof ProtoServices;

/**
 * A proto service's implementation, checked against its descriptor: what every surface serves (the
 * gRPC server, the in-process client, the GraphQL resolvers).
 */
export interface ServiceImplementation<N extends ProtoServiceName = ProtoServiceName> {
  readonly desc: ServiceDescriptor<N>;
  readonly handlers: HandlerMap;
}

/**
 * Stands in a handler map for an RPC the contract declares and this release does not serve yet, so
 * that every RPC of the proto is listed and an unlisted one does not compile. `defineService` turns it
 * into a handler answering `unimplemented` `<service>.<Rpc> is not implemented yet`.
 */
export const notImplemented: Handler<unknown, never> = async () => { throw new AppError('unimplemented', 'not implemented yet'); };

/**
 * Pairs a proto service with its handlers (STYLE §2: `service.ts` builds the map from `rpc/<method>.ts`).
 *
 * @param desc the descriptor of the proto service (`serviceDescriptor('mfa')`)
 * @param handlers one handler per RPC of the proto, typed by the generated interface
 * @throws Error when the handler keys and the proto's RPCs differ at run time (a programming error:
 *   a descriptor paired with another service's handlers)
 */
export function defineService<N extends ProtoServiceName>(desc: ServiceDescriptor<N>, handlers: HandlersOf<ProtoServices[N]>): ServiceImplementation<N> {
  const map = handlers as unknown as HandlerMap;
  const missing = [...desc.methods.keys()].filter((m) => typeof map[m] !== 'function');
  const extra = Object.keys(map).filter((m) => !desc.methods.has(m));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`${desc.fullName}: handlers ${missing.length ? `miss ${missing.join(', ')}` : ''}${missing.length && extra.length ? '; ' : ''}${extra.length ? `are not RPCs: ${extra.join(', ')}` : ''}`);
  }
  const served: HandlerMap = {};
  for (const [rpc, handler] of Object.entries(map)) {
    served[rpc] = handler === notImplemented
      ? async () => { throw new AppError('unimplemented', `${desc.service}.${rpc} is not implemented yet`); }
      : handler;
  }
  return { desc, handlers: served };
}

/** The untyped transport a typed client calls through (see ./grpc.ts). */
export interface RpcTransport {
  call(rpc: string, req: unknown, ctx: CallContext): Promise<Record<string, unknown>>;
  close(): void;
}

/**
 * A typed client over a transport: one function per RPC of the descriptor.
 * @throws AppError from the peer, with its code (`unavailable` when it cannot be reached)
 */
export function typedClient<N extends ProtoServiceName>(desc: ServiceDescriptor<N>, transport: RpcTransport): ClientOf<ProtoServices[N]> {
  const client: Record<string, unknown> = { close: () => transport.close() };
  for (const rpc of desc.methods.keys()) client[rpc] = (req: unknown, ctx: CallContext) => transport.call(rpc, req, ctx);
  return Object.freeze(client) as ClientOf<ProtoServices[N]>;
}
