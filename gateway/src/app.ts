/**
 * @module gateway/app
 * The edge (ARCHITECTURE §2 "gateway"): the unified /v1 REST surface, federated GraphQL at
 * /graphql, /healthz and the OpenAPI document, behind the HTTP layer (CORS, CSRF, client IP,
 * rate limit, body rules). It owns no data and asserts no identity.
 */
import type http from 'node:http';
import express, { type Express } from 'express';
import type { GraphQLSchema } from 'graphql';
import { AppError } from '@gatehouse/errors';
import {
  extractTraceContext, failSpan, runInSpan, SpanKind, tracingEnabled, type DependencyCheck, type Logger, type Registry,
} from '@gatehouse/observability';
import { readinessHandler } from '@gatehouse/rpc';
import { createHttpLayer, clientInfo, createGatewayServer, routeLabel, sendErrorFor, type HttpLayerOptions, type RateLimiter } from './http/index.ts';

import { ROUTES, buildOpenApi, notServedOperations } from './routes/table.ts';
import { callContextOf, createRestFastPath, mountRestRoutes, type ServiceClients } from './rest.ts';
import type { createGraphqlGateway } from './graphql/gateway.ts';
import { loginRedirectRoute, mountSocialRoutes, pickParams } from './login-redirect.ts';
import { mountAuthorizationServerMetadata, mountOAuthRoutes } from './oauth.ts';
import { mountMcp } from './mcp.ts';
import { mountOpenFgaProxy } from './openfga-proxy.ts';
import type { QueryLimits } from './graphql/limits.ts';
import { mountSamlIdp } from './saml-idp.ts';
import { mountScim } from './scim.ts';
import { mountSso } from './sso.ts';
import { mountPlayground } from './graphql/playground.ts';
import { LOGIN_PAGE_PATH, mountLoginPage, type LoginPageOptions } from './login-page.ts';
import { DASHBOARD_PATH, mountDashboard } from './dashboard.ts';

export interface GatewayOptions {
  http: HttpLayerOptions;
  version: string;
  introspection: boolean;
  limits: QueryLimits;
  /** `--enable-playground`: GraphiQL at `GET /graphql` for super-admins (the admin service judges who is one) */
  playground: boolean;
  /** `--enable-login-page` (null when false): the hosted login page under /app (login-page.ts) */
  loginPage: Omit<LoginPageOptions, 'basePath'> | null;
  /** `--enable-dashboard`: the admin console under /dashboard (dashboard.ts) */
  dashboard: boolean;
  internalToken: string;
  deadlineMs: number;
  /** `--mcp-enabled`: the MCP endpoint `POST /mcp` and its RFC 9728 metadata (mcp.ts) */
  mcp: boolean;
  /** `--gateway-openfga-url` (null when absent): OpenFGA's HTTP API under /stores, passed to this URL (openfga-proxy.ts) */
  openfgaUrl?: string | null;
}

export interface GatewayServices {
  clients: ServiceClients;
  supergraphSdl: string;
  /** subgraph name → in-process schema (all-in-one) or URLs (split) */
  subgraphs: Record<string, { schema: () => GraphQLSchema } | { urls: string[] }>;
  /**
   * What `/readyz` checks besides the gateway's own rate-limit store: the services it forwards to
   * (split mode), or the dependencies of every service in the process (all-in-one).
   */
  readiness?: readonly DependencyCheck[];
}

export interface Gateway {
  app: Express;
  /** the node:http request listener: exact /v1 table paths on the fast path, everything else to `app` */
  handler: http.RequestListener;
  limiter: RateLimiter;
  close(): Promise<void>;
}

/** Builds the gateway's express app. */
export async function createGatewayApp(opts: GatewayOptions, services: GatewayServices, deps: { logger: Logger; registry: Registry }): Promise<Gateway> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // /v1 paths are exact, as the spec writes them: `/V1/Login` is 404 (the body rules match `/v1/` only)
  app.set('case sensitive routing', true);
  const layer = createHttpLayer({ ...opts.http, deadlineMs: opts.deadlineMs }, deps);
  for (const mw of layer.before) app.use(mw);

  app.get('/healthz', (_req, res) => { res.status(200).json({ status: 'ok' }); });
  app.get('/readyz', readinessHandler([...(layer.limiter.readiness ? [layer.limiter.readiness] : []), ...(services.readiness ?? [])]));
  // the services' handler maps say which routes answer 501; asked again after a minute, so the
  // document follows a rolling upgrade (and at once while a service cannot be asked)
  let openapi: { doc: unknown; until: number } | undefined;
  app.get('/openapi.json', async (_req, res) => {
    if (openapi === undefined || openapi.until < Date.now()) {
      const { notServed, complete } = await notServedOperations(ROUTES, services.clients);
      openapi = { doc: buildOpenApi(ROUTES, { version: opts.version, serverUrl: opts.http.url, notServed }), until: complete ? Date.now() + 60_000 : 0 };
    }
    res.status(200).json(openapi.doc);
  });

  // before the table routes: GET /verify_email answers with a redirect, not JSON
  const redirecting = { url: opts.http.url, deadlineMs: opts.deadlineMs };
  app.get('/verify_email', loginRedirectRoute(services.clients, redirecting, deps.logger, {
    service: 'authn', rpc: 'VerifyEmailLink', request: (p) => pickParams(p, ['token', 'redirect_uri', 'state', 'roles', 'scope']),
  }));
  // issue 20: social login, a thin 302 adapter over authn's SocialLogin / SocialCallback
  mountSocialRoutes(app, services.clients, redirecting, deps.logger);
  // the OAuth 2.0 / OpenID Provider endpoints (issue 18): their own wire, not the table's JSON
  mountOAuthRoutes(app, services.clients, { deadlineMs: opts.deadlineMs, logger: deps.logger });
  // RFC 8414 §3: the authorization server metadata, the discovery document under its OAuth name
  mountAuthorizationServerMetadata(app, services.clients, { deadlineMs: opts.deadlineMs, logger: deps.logger });
  // issue 34 §7: the MCP endpoint, an OAuth resource server for tokens issued for it
  if (opts.mcp) mountMcp(app, services.clients, { url: opts.http.url, version: opts.version, deadlineMs: opts.deadlineMs, logger: deps.logger });
  // organization SSO (issue 20): OIDC and SAML logins, the SAML SP, org discovery (sso.ts)
  // issue 31 §1: a refused browser step lands on the hosted app's error screen when the app is served
  mountSso(app, services.clients, {
    deadlineMs: opts.deadlineMs, logger: deps.logger, errorPage: opts.loginPage ? `${opts.http.url.replace(/\/+$/, '')}${LOGIN_PAGE_PATH}/error` : null,
  });
  // issue 36 §2: OpenFGA's HTTP API, off the public edge unless asked for
  if (opts.openfgaUrl) mountOpenFgaProxy(app, { target: opts.openfgaUrl, timeoutMs: opts.deadlineMs, logger: deps.logger });
  mountRestRoutes(app, ROUTES, services.clients, { deadlineMs: opts.deadlineMs, logger: deps.logger });
  mountScim(app, services.clients, { deadlineMs: opts.deadlineMs, logger: deps.logger });
  // the SAML IdP's metadata and SSO endpoints (issue 20): XML and HTML, not the table's JSON
  mountSamlIdp(app, services.clients, { deadlineMs: opts.deadlineMs, logger: deps.logger });

  // Apollo Gateway (and its query planner, a third of the start-up CPU) is loaded and started by the
  // first POST /graphql, not at start-up (issue 22 §3): a deployment that serves only REST and gRPC
  // never pays for it. A failed start is logged and retried by the next GraphQL request.
  type GraphqlGateway = Awaited<ReturnType<typeof createGraphqlGateway>>;
  let graphql: Promise<GraphqlGateway> | null = null;
  const graphqlGateway = (): Promise<GraphqlGateway> => graphql ??= import('./graphql/gateway.ts')
    .then(({ createGraphqlGateway: create }) => create({
      supergraphSdl: services.supergraphSdl,
      subgraphs: services.subgraphs,
      introspection: opts.introspection,
      limits: opts.limits,
      internalToken: opts.internalToken,
      clientIpOf: (req) => clientInfo(req).ip,
      deadlineMs: opts.deadlineMs,
      logger: deps.logger,
    }))
    .catch((err: unknown) => {
      deps.logger.error({ err }, 'GraphQL gateway did not start');
      graphql = null;
      throw err;
    });
  app.post('/graphql', (req, res, next) => {
    graphqlGateway().then((g) => g.handler(req, res, next), next);
  });
  const basePath = new URL(opts.http.url).pathname.replace(/\/+$/, '');
  if (opts.playground) {
    // one admin-auth path (issue 30 §3): the page opens for whoever an admin-class RPC admits, so the
    // cookie, the header, --disable-admin-header-auth and the failure counter are the admin guard's
    mountPlayground(app, {
      basePath,
      admit: async (req) => {
        const admin = services.clients.admin;
        if (!admin) throw new AppError('unavailable', 'the admin service is not part of this deployment');
        await admin.call('AdminMeta', {}, callContextOf(req, 'graphql', opts.deadlineMs));
      },
    });
  }
  if (opts.loginPage) mountLoginPage(app, { ...opts.loginPage, basePath }, deps.logger);
  if (opts.dashboard) mountDashboard(app, { basePath, playground: opts.playground }, deps.logger);
  // issue 33 §3: a browser opening the root lands on the hosted login page, else on the admin
  // console, else on the GraphQL playground
  const home = opts.loginPage ? `${basePath}${LOGIN_PAGE_PATH}` : opts.dashboard ? `${basePath}${DASHBOARD_PATH}`
    : opts.playground ? `${basePath}/graphql` : null;
  if (home) app.get('/', (_req, res) => { res.redirect(302, home); });
  app.all('/graphql', (req, res) => {
    res.setHeader('Allow', 'POST, OPTIONS');
    sendErrorFor(req, res, new AppError('method_not_allowed', 'Method Not Allowed'));
  });

  app.use(layer.notFound);
  app.use((req, res) => { sendErrorFor(req, res, new AppError('not_found', 'Not Found')); });
  app.use(layer.errorHandler);
  const fast = createRestFastPath(ROUTES, services.clients, layer, { deadlineMs: opts.deadlineMs, logger: deps.logger });
  return {
    app,
    handler: (req, res) => {
      if (!tracingEnabled()) {
        if (!fast(req, res)) app(req, res);
        return;
      }
      traced(req, res, () => { if (!fast(req, res)) app(req, res); });
    },
    limiter: layer.limiter,
    async close() {
      await (await graphql?.catch(() => null))?.stop();
      await layer.close();
    },
  };
}

/**
 * Runs `serve` inside an HTTP SERVER span (OpenTelemetry HTTP semantic conventions), continuing the
 * caller's trace when it sent a W3C `traceparent` header; the span is named after the route
 * template (never the raw path) and ends when the response closes.
 */
function traced(req: http.IncomingMessage, res: http.ServerResponse, serve: () => void): void {
  runInSpan(`${req.method ?? 'GET'}`, {
    kind: SpanKind.SERVER,
    parent: extractTraceContext(req.headers),
    attributes: { 'http.request.method': req.method ?? 'GET' },
  }, (span) => {
    res.on('close', () => {
      const route = routeLabel(req as express.Request);
      span.updateName(`${req.method ?? 'GET'} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
      if (!res.writableFinished || res.statusCode >= 500) failSpan(span, String(res.writableFinished ? res.statusCode : 499));
      span.end();
    });
    serve();
  });
}

/**
 * How long a stopping gateway lets the requests it took finish before it closes their connections, ms
 * (below the chart's grace period after its preStop sleep).
 */
export const HTTP_DRAIN_MS = 10_000;

/**
 * Listens on host:port with `handler` (an Express app or a node:http listener); resolves with the bound
 * port. `close()` stops accepting connections and closes the idle ones, answers the requests it already
 * took (a request arriving on an open connection gets `Connection: close`, RFC 9112 §9.6), closes each
 * connection once it is answered, and resolves when none is left, cutting what is left after
 * {@link HTTP_DRAIN_MS}.
 */
export async function listen(handler: http.RequestListener, host: string, port: number): Promise<{ port: number; server: http.Server; close(): Promise<void> }> {
  let closing = false;
  const server = createGatewayServer((req, res) => {
    if (closing) res.setHeader('Connection', 'close');
    handler(req, res);
  });
  server.keepAliveTimeout = 65_000;
  const bound = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as { port: number }).port));
  });
  return {
    port: bound,
    server,
    async close() {
      closing = true;
      await new Promise<void>((resolve) => {
        const cut = setTimeout(() => server.closeAllConnections(), HTTP_DRAIN_MS);
        // a keep-alive connection whose request was already running when closing began goes idle
        // once answered: closed on the next tick of this sweep, not after keepAliveTimeout
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => { clearTimeout(cut); clearInterval(sweep); resolve(); });
      });
    },
  };
}
