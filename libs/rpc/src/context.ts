/**
 * @module @gatehouse/rpc/context
 * The call context every service handler receives, whatever the surface (REST through the gateway,
 * GraphQL subgraph, native gRPC). The gateway never asserts identity: it forwards the caller's
 * credentials (headers) and the client IP it resolved, and each service authenticates the caller
 * itself through @gatehouse/auth (ARCHITECTURE §2).
 */

/** Which public surface a call arrived on; recorded in audit metadata (behaviour.md §5.7). */
export type Protocol = 'rest' | 'graphql' | 'grpc';

export interface CallContext {
  /**
   * Caller headers, names lower-cased. The ones services read: `authorization`, `cookie`,
   * `x-service-admin-secret`, `user-agent`, `origin`.
   */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** client IP as resolved by the gateway under --trusted-proxies (spec §1) */
  readonly clientIp: string;
  readonly protocol: Protocol;
  /**
   * `Set-Cookie` header values the handler wants on the HTTP response (spec §4: cookies are real
   * Set-Cookie headers). Handlers push; the transport carries them to the caller.
   */
  readonly setCookies: string[];
  /** request deadline, ms since the epoch (behaviour.md §0.1: 30 s) */
  readonly deadlineMs?: number;
}

/**
 * A unary RPC implementation. Requests and responses use the spec's snake_case wire fields; services
 * type theirs through `defineService` (./typed.ts), so the untyped form is only what transports see.
 */
export type Handler<Req = unknown, Res = unknown> = (req: Req, ctx: CallContext) => Promise<Res>;

/**
 * A service's RPCs keyed by the proto method name (`Signup`, `CheckPermissions`, ...), as transports
 * dispatch them: the request has been normalised by the method's codec.
 */
export type HandlerMap = Record<string, Handler<Record<string, unknown>>>;

/** Builds a context for internal calls and tests. */
export function createCallContext(init: Partial<Omit<CallContext, 'setCookies'>> & { setCookies?: string[] } = {}): CallContext {
  return {
    headers: init.headers ?? {},
    clientIp: init.clientIp ?? '127.0.0.1',
    protocol: init.protocol ?? 'grpc',
    setCookies: init.setCookies ?? [],
    ...(init.deadlineMs === undefined ? {} : { deadlineMs: init.deadlineMs }),
  };
}
