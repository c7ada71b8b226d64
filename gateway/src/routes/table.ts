/**
 * @module gateway/routes/table The REST route table (ARCHITECTURE §3): method, path, owning service
 * and RPC. It drives routing, 404/405 answers, metric labels and the OpenAPI document. Every field of a
 * route is declared once, on its RPC in proto/ (`(gatehouse.common.v1.rest)`, `summary`, `graphql` and
 * `auth` options), and read here: adding a route is adding the option to the RPC.
 */
import { PUBLIC_API_NAMES } from '@gatehouse/contracts/service-names';
import { serviceDescriptor, type AuthClass as RpcAuthClass, type ServiceName } from '@gatehouse/rpc';

export type { ServiceName } from '@gatehouse/rpc';

export type HttpMethod = 'GET' | 'POST';
/**
 * Who may call a route (spec §5): its RPC's `(gatehouse.common.v1.auth)` option (see AuthClass in
 * @gatehouse/rpc). `internal` RPCs are never routed.
 */
export type AuthClass = Exclude<RpcAuthClass, 'internal'>;

export interface Route {
  readonly method: HttpMethod;
  readonly path: string;
  /** owning service (ARCHITECTURE §2: a route belongs to the service that owns its data) */
  readonly service: ServiceName;
  /** proto method: the GraphQL field without underscores, PascalCase (`_fga_write_model` → `WriteModel`) */
  readonly rpc: string;
  readonly auth: AuthClass;
  readonly summary: string;
  /** the GraphQL root field with the same request and response fields (spec §1), if any */
  readonly graphqlField?: string;
}

/** `_fga_write_model` → `WriteModel`, `validate_jwt_token` → `ValidateJwtToken`, `_users` → `Users`. */
export function rpcNameOf(graphqlField: string): string {
  return graphqlField.replace(/^_/, '').replace(/^fga_/, '')
    .split('_').filter((p) => p !== '').map((p) => p[0]!.toUpperCase() + p.slice(1)).join('');
}

/**
 * Every REST route: one per RPC of a public proto service that declares a
 * `(gatehouse.common.v1.rest)` option, with its `summary` and `graphql` options, in registry and proto
 * order. The /v1 routes, the two discovery documents and the email link target all come from there.
 * @throws Error (at import) when an internal RPC declares a route (a proto bug)
 */
export const ROUTES: readonly Route[] = Object.freeze(PUBLIC_API_NAMES.flatMap((service) =>
  [...serviceDescriptor(service).methods.values()].flatMap((codec): Route[] => {
    if (!codec.rest) return [];
    if (codec.auth === 'internal') throw new Error(`${service}.${codec.name}: an internal RPC declares a REST route`);
    return [{
      method: codec.rest.method, path: codec.rest.path, service, rpc: codec.name, auth: codec.auth, summary: codec.summary,
      ...(codec.graphqlField === undefined ? {} : { graphqlField: codec.graphqlField }),
    }];
  })));

/** The answer of {@link RouteMatcher.match}. */
export type RouteMatch =
  | { route: Route }
  | { error: 'method_not_allowed'; allow: readonly HttpMethod[] }
  | { error: 'not_found' };

export interface RouteMatcher {
  match(method: string, path: string): RouteMatch;
}

/**
 * Indexes `table` by exact path (a Map lookup per request). HEAD matches a GET route.
 * @throws Error when two routes share method and path (a table bug, found at startup)
 */
export function createRouteMatcher(table: readonly Route[]): RouteMatcher {
  const byPath = new Map<string, Map<HttpMethod, Route>>();
  for (const route of table) {
    const methods = byPath.get(route.path) ?? new Map<HttpMethod, Route>();
    if (methods.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  return {
    match(method, path) {
      const methods = byPath.get(path);
      if (!methods) return { error: 'not_found' };
      const m = method.toUpperCase();
      const route = methods.get((m === 'HEAD' ? 'GET' : m) as HttpMethod);
      return route ? { route } : { error: 'method_not_allowed', allow: [...methods.keys()] };
    },
  };
}

const DEFAULT_MATCHER = createRouteMatcher(ROUTES);

/** {@link RouteMatcher.match} over {@link ROUTES}. */
export function matchRoute(method: string, path: string): RouteMatch {
  return DEFAULT_MATCHER.match(method, path);
}

export { buildOpenApi, notServedOperations } from './openapi.ts';
