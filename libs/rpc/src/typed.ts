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
import type { AuthClass, ServiceDescriptor } from './proto.ts';

/**
 * Enforces an RPC's auth class before its handler runs (issue 14 §2): resolves when the caller may
 * call, throws AppError `unauthenticated` otherwise. libs/auth builds one from the service's
 * credential checks (`createAuthGuard`).
 */
export type Guard = (auth: AuthClass, ctx: CallContext, call?: GuardedCall) => Promise<unknown>;

/** The call a guard checks: the RPC's name and its request, normalised by the proto codec. */
export interface GuardedCall {
  rpc: string;
  request: Record<string, unknown>;
  /** the RPC only reads (`idempotency_level = NO_SIDE_EFFECTS` in its proto); absent: treated as mutating */
  readOnly?: boolean;
}

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

/** Marks a served handler that stands for {@link notImplemented} (it answers `unimplemented`). */
const NOT_SERVED = Symbol.for('gatehouse.rpc.notServed');

/**
 * True when `handler` (from a {@link defineService} map) runs real code, false when it is the
 * `unimplemented` answer of {@link notImplemented} or absent. The gateway's `/openapi.json` marks
 * routes from this, the same map that answers the calls (issue 15: "marks what is not served").
 */
export function isServed(handler: Handler<any, any> | undefined): boolean {
  return handler !== undefined && (handler as unknown as Record<symbol, unknown>)[NOT_SERVED] !== true;
}

const markNotServed = <H extends object>(h: H): H => Object.assign(h, { [NOT_SERVED]: true });

/**
 * Pairs a proto service with its handlers (STYLE §2: `service.ts` builds the map from `rpc/<method>.ts`),
 * behind the one check of who may call (issue 14 §2): each RPC's auth class, declared once in the proto,
 * is enforced by `guard` before its handler or its `unimplemented` answer runs, so every surface (REST
 * through the gateway, GraphQL, native gRPC, in-process calls) refuses alike. `public` and `internal`
 * RPCs skip the guard (the internal token is the transport's check, see ./grpc.ts).
 *
 * @param desc the descriptor of the proto service (`serviceDescriptor('mfa')`)
 * @param handlers one handler per RPC of the proto, typed by the generated interface
 * @param guard the service's credential checks; required unless every RPC is public or internal
 * @throws Error when the handler keys and the proto's RPCs differ at run time (a programming error:
 *   a descriptor paired with another service's handlers), or when an RPC needs a guard and none is given
 */
export function defineService<N extends ProtoServiceName>(desc: ServiceDescriptor<N>, handlers: HandlersOf<ProtoServices[N]>, guard?: Guard): ServiceImplementation<N> {
  const map = handlers as unknown as HandlerMap;
  const missing = [...desc.methods.keys()].filter((m) => typeof map[m] !== 'function');
  const extra = Object.keys(map).filter((m) => !desc.methods.has(m));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`${desc.fullName}: handlers ${missing.length ? `miss ${missing.join(', ')}` : ''}${missing.length && extra.length ? '; ' : ''}${extra.length ? `are not RPCs: ${extra.join(', ')}` : ''}`);
  }
  const served: HandlerMap = {};
  for (const [rpc, handler] of Object.entries(map)) {
    const stub = handler === notImplemented;
    const run: Handler<Record<string, unknown>> = stub
      ? markNotServed(async () => { throw new AppError('unimplemented', `${desc.service}.${rpc} is not implemented yet`); })
      : handler;
    const { auth, readOnly } = desc.methods.get(rpc)!;
    if (auth === 'public' || auth === 'internal') {
      served[rpc] = run;
      continue;
    }
    if (!guard) throw new Error(`${desc.fullName}.${rpc} is ${auth}: defineService needs a guard`);
    const guarded: Handler<Record<string, unknown>> = async (req, ctx) => {
      await guard(auth, ctx, { rpc, request: req, readOnly });
      return run(req, ctx);
    };
    served[rpc] = stub ? markNotServed(guarded) : guarded;
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

/**
 * A service of the contract whose RPCs this release does not serve yet: every RPC answers
 * `unimplemented` `<service>.<Rpc> is not implemented yet`, after the auth-class check (so an
 * unauthenticated call to an admin RPC is 401 on every surface, issue 14 §2). As a service gains
 * RPCs it moves to `defineService` with `notImplemented` for the rest.
 */
export function unimplementedService<N extends ProtoServiceName>(desc: ServiceDescriptor<N>, guard: Guard): ServiceImplementation<N> {
  const handlers = Object.fromEntries([...desc.methods.keys()].map((rpc) => [rpc, notImplemented]));
  return defineService(desc, handlers as unknown as HandlersOf<ProtoServices[N]>, guard);
}
