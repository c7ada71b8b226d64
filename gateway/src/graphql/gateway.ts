/**
 * @module gateway/graphql/gateway
 * `POST /graphql`: Apollo Gateway over the composed supergraph (graphql.md §5). All-in-one uses
 * in-process data sources sharing the gateway's context; split mode calls each service's subgraph
 * over HTTP, forwarding the caller's credentials and client IP and bringing `Set-Cookie` back
 * (graphql.md §5.3). A subgraph with no target answers `unimplemented`. Every GraphQL answer is
 * HTTP 200 (graphql.md §1.1).
 */
import type { GraphQLSchema } from 'graphql';
import type { Request, Response, RequestHandler } from 'express';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloGateway, LocalGraphQLDataSource, RemoteGraphQLDataSource, type GraphQLDataSource } from '@apollo/gateway';
import { FORWARDED_HEADERS, type CallContext } from '@gatehouse/rpc';
import type { Logger } from '@gatehouse/observability';
import { formatGatewayError } from './errors.ts';
import { queryLimitsRule, type QueryLimits } from './limits.ts';

/** Context of one GraphQL request at the gateway; in all-in-one it is also the subgraphs' context. */
export interface GatewayContext {
  callContext: CallContext;
  res: Response;
}

/** a subgraph in this process (its schema built on first call) or served at `urls` */
export type SubgraphTarget = { schema: () => GraphQLSchema } | { urls: string[] };

export interface GraphqlGatewayOptions {
  supergraphSdl: string;
  subgraphs: Record<string, SubgraphTarget>;
  introspection: boolean;
  limits: QueryLimits;
  /** proves to subgraphs that the caller is the gateway (split mode) */
  internalToken: string;
  /** the client IP the HTTP layer resolved under --trusted-proxies */
  clientIpOf: (req: Request) => string;
  deadlineMs: number;
  logger: Logger;
}

function readSetCookies(headers: unknown): string[] {
  const h = headers as { getSetCookie?: () => string[]; raw?: () => Record<string, string[]>; get?: (k: string) => string | null } | undefined;
  if (!h) return [];
  if (typeof h.getSetCookie === 'function') return h.getSetCookie();
  if (typeof h.raw === 'function') return h.raw()['set-cookie'] ?? [];
  const joined = h.get?.('set-cookie');
  // Our cookies carry Max-Age, never Expires, so they contain no commas.
  return joined ? joined.split(/,\s*(?=[^;=,\s]+=)/) : [];
}

/**
 * `fetch` for a subgraph. Apollo Server answers some refusals of a request with a 4xx status and a
 * GraphQL body (`{errors: [{message, extensions: {code: "BAD_USER_INPUT"}}]}`): a variable its scalar
 * refuses (`Int64` given `"abc"`, a `Map` given a string), which the gateway's supergraph cannot
 * check, since there the scalars take any value. RemoteGraphQLDataSource turns every non-2xx answer
 * into an error without a code, which the gateway answers as INTERNAL (issue 30 §5: no input reaches
 * a 5xx), so such an answer is handed on as the GraphQL answer it is (HTTP 200, graphql.md §1.1) and
 * its errors keep their codes (BAD_USER_INPUT becomes INVALID_ARGUMENT, errors.ts). A 413 (a body over
 * the subgraph's 1 MiB) becomes INVALID_ARGUMENT `request body too large`, as REST answers it. Any
 * other answer is returned unchanged.
 * @param url the subgraph's `/graphql` URL
 * @param init the request RemoteGraphQLDataSource built
 * @returns the subgraph's answer, or a 200 GraphQL answer in its place as above
 * @throws what `fetch` throws (a connection failure; see {@link connectionFailure})
 */
export async function subgraphFetch(url: string, init: RequestInit): Promise<globalThis.Response> {
  const res = await fetch(url, init);
  if (res.status < 400 || res.status >= 500) return res;
  const headers = new Headers(res.headers);
  headers.set('content-type', 'application/json');
  headers.delete('content-length');
  const asGraphql = (body: string): globalThis.Response => new globalThis.Response(body, { status: 200, statusText: 'OK', headers });
  if (res.status === 413) {
    await res.body?.cancel();
    return asGraphql(JSON.stringify({ errors: [{ message: 'request body too large', extensions: { code: 'INVALID_ARGUMENT' } }] }));
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const errors = (body as { errors?: unknown } | undefined)?.errors;
  if (Array.isArray(errors) && errors.length > 0) return asGraphql(text);
  return new globalThis.Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
}

class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  private readonly internalToken: string;

  constructor(url: string, internalToken: string) {
    super({ url, fetcher: subgraphFetch as never });
    this.internalToken = internalToken;
  }

  override willSendRequest({ request, context }: Parameters<NonNullable<RemoteGraphQLDataSource<GatewayContext>['willSendRequest']>>[0]): void {
    const headers = request.http?.headers;
    if (!headers || !context?.callContext) return;
    for (const key of FORWARDED_HEADERS) {
      const v = context.callContext.headers[key];
      if (v) headers.set(key, v);
    }
    headers.set('x-gatehouse-client-ip', context.callContext.clientIp);
    headers.set('x-gatehouse-protocol', 'graphql');
    headers.set('x-gatehouse-internal', this.internalToken);
  }

  override didReceiveResponse({ response, context }: Parameters<NonNullable<RemoteGraphQLDataSource<GatewayContext>['didReceiveResponse']>>[0]) {
    for (const c of readSetCookies(response.http?.headers)) context.callContext?.setCookies.push(c);
    return response;
  }
}

/** The error codes of a connection that failed (Node's and undici's), searched through `cause`s. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED']);

/**
 * How a subgraph fetch failed: `refused` when no connection was made (the request never left, so
 * sending it elsewhere is safe for any operation), `lost` when the connection failed otherwise (it may
 * have run), null when it is not a connection failure at all.
 */
export function connectionFailure(err: unknown): 'refused' | 'lost' | null {
  // duck-typed, not `instanceof`: undici's errors may come from another realm (a VM context)
  let e = err as { code?: unknown; cause?: unknown; errors?: unknown } | null | undefined;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    if (e.code === 'ECONNREFUSED') return 'refused';
    if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return 'lost';
    if (Array.isArray(e.errors) && e.errors.length > 0) return connectionFailure(e.errors[0]);
    e = e.cause as typeof e;
  }
  return null;
}

/**
 * A split-mode subgraph at one or several URLs (replicas), used in turn. A fetch whose connection failed
 * is sent once more to the next replica when that cannot do twice what the caller asked once: always
 * when the connection was refused (nothing was sent), and for a query (no side effects, graphql.md §1)
 * when it was lost mid-request; a mutation whose connection was lost is not repeated. When no replica
 * answers, the fields it serves fail with `UNAVAILABLE` and a message naming the service, at once, as
 * the REST routes of a service that is down answer 503 (issue 37 §4).
 */
export class ReplicatedSubgraph implements GraphQLDataSource<GatewayContext> {
  private next = 0;
  private readonly sources: ForwardingDataSource[];
  private readonly message: string;

  constructor(name: string, urls: string[], token: string) {
    this.sources = urls.map((u) => new ForwardingDataSource(u, token));
    this.message = `the ${name} service is unavailable, please try again later`;
  }

  async process(options: Parameters<GraphQLDataSource<GatewayContext>['process']>[0]): ReturnType<GraphQLDataSource<GatewayContext>['process']> {
    const query = !/^\s*(mutation|subscription)\b/.test(options.request.query ?? '');
    const first = this.next++ % this.sources.length;
    try {
      return await this.sources[first]!.process(options);
    } catch (err) {
      const failure = connectionFailure(err);
      if (failure === null) throw err;
      if (this.sources.length > 1 && (failure === 'refused' || query)) {
        try {
          return await this.sources[(first + 1) % this.sources.length]!.process(options);
        } catch (again) {
          if (connectionFailure(again) === null) throw again;
        }
      }
      return { errors: [{ message: this.message, extensions: { code: 'UNAVAILABLE' } }] };
    }
  }
}

/**
 * A subgraph the supergraph names but this deployment does not run (the admin and orgs services
 * until they exist): every fetch from it answers `unimplemented`, as the REST routes of a service
 * that is not part of the deployment do (rest.ts), instead of failing the gateway's start.
 */
class AbsentSubgraph implements GraphQLDataSource<GatewayContext> {
  private readonly message: string;

  constructor(name: string) {
    this.message = `the ${name} service is not part of this deployment yet`;
  }

  async process(): ReturnType<GraphQLDataSource<GatewayContext>['process']> {
    return { errors: [{ message: this.message, extensions: { code: 'UNIMPLEMENTED' } }] };
  }
}

function plugins(): ApolloServerPlugin<GatewayContext>[] {
  return [{
    async requestDidStart() {
      return {
        async willSendResponse({ response, contextValue }) {
          // graphql.md §1.1: HTTP 200 for everything GraphQL answers, parse and validation errors included.
          if (response.http.status && response.http.status >= 400 && response.http.status < 500) response.http.status = 200;
          const cookies = contextValue.callContext?.setCookies ?? [];
          if (cookies.length > 0) contextValue.res.append('Set-Cookie', cookies);
        },
      };
    },
  }];
}

/**
 * Starts Apollo Gateway + Server and returns the express handler for `POST /graphql`.
 * @throws Error when the supergraph cannot be loaded (a startup failure)
 */
export async function createGraphqlGateway(opts: GraphqlGatewayOptions): Promise<{ handler: RequestHandler; stop(): Promise<void> }> {
  const gateway = new ApolloGateway({
    supergraphSdl: opts.supergraphSdl,
    buildService: ({ name }) => {
      const target = opts.subgraphs[name];
      if (!target) {
        opts.logger.warn({ subgraph: name }, 'subgraph not configured: its fields answer unimplemented');
        return new AbsentSubgraph(name);
      }
      if ('schema' in target) return new LocalGraphQLDataSource(target.schema());
      return new ReplicatedSubgraph(name, target.urls, opts.internalToken);
    },
  });
  const server = new ApolloServer<GatewayContext>({
    gateway,
    introspection: opts.introspection,
    csrfPrevention: false, // the spec's Origin/Referer rule is the CSRF defence (graphql.md §1.1)
    allowBatchedHttpRequests: false, // graphql.md §1.1: an array body is refused (400, GraphQL-shaped)
    includeStacktraceInErrorResponses: false,
    formatError: (formatted) => formatGatewayError(formatted),
    // Runs in the same walk as graphql-js's rules and stops it for a refused document (limits.ts). Leave
    // Apollo's `maxRecursiveSelections` off: with it, these rules move to a second pass after graphql-js's.
    validationRules: [queryLimitsRule(opts.limits)],
    plugins: plugins(),
    logger: {
      debug: (m: string) => opts.logger.debug(m),
      info: (m: string) => opts.logger.debug(m),
      warn: (m: string) => opts.logger.warn(m),
      error: (m: string) => opts.logger.error(m),
    },
  });
  await server.start();
  const middleware = expressMiddleware(server, {
    context: async ({ req, res }): Promise<GatewayContext> => {
      const headers: Record<string, string | undefined> = {};
      for (const key of FORWARDED_HEADERS) {
        const v = req.headers[key];
        headers[key] = Array.isArray(v) ? v.join(', ') : v;
      }
      return {
        res,
        callContext: { headers, clientIp: opts.clientIpOf(req), protocol: 'graphql' as const, setCookies: [] as string[], deadlineMs: Date.now() + opts.deadlineMs },
      };
    },
  });
  return { handler: middleware, stop: () => server.stop() };
}
