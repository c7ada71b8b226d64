/**
 * @module @gatehouse/rpc/service-http
 * A service's own HTTP listener in split mode: `POST /graphql` (its federation subgraph) and
 * `GET /healthz`. Subgraphs are internal (graphql.md §5.3): a request must carry the gateway's
 * `x-gatehouse-internal` token, otherwise anyone could read any User through `_entities`.
 */
import http from 'node:http';
import express from 'express';
import type { GraphQLSchema } from 'graphql';
import type { ApolloServer } from '@apollo/server';
import { readinessReport, type DependencyCheck, type Logger } from '@gatehouse/observability';
import { timingSafeEqual } from 'node:crypto';
import { FORWARDED_HEADERS } from './grpc.ts';
import type { SubgraphContext } from './graphql.ts';
import type { Protocol } from './context.ts';

export interface ServiceHttpOptions {
  host: string;
  port: number;
  schema?: GraphQLSchema;
  internalToken: string;
  logger: Logger;
  /** the dependencies `/readyz` checks (`/healthz` is liveness and checks none) */
  readiness?: readonly DependencyCheck[];
}

function sameToken(a: string | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * `GET /readyz` (issue 15): 200 `{status: "ready", checks}` when every dependency answers, else 503
 * `{code: "unavailable", message: "not ready: <name> (<target>) is down: <cause>", checks}` naming the
 * first one down; `checks` maps each dependency to `ok` or its cause. Never cached: a probe sees now.
 */
export function readinessHandler(checks: readonly DependencyCheck[]): express.RequestHandler {
  return (_req, res, next) => {
    readinessReport(checks).then((r) => {
      res.setHeader('Cache-Control', 'no-store');
      if (r.ready) res.status(200).json({ status: 'ready', checks: r.checks });
      else res.status(503).json({ code: 'unavailable', message: `not ready: ${r.down!.name} (${r.down!.target}) is down: ${r.down!.cause}`, checks: r.checks });
    }, next);
  };
}

/** Starts the listener; resolves with the bound port. */
export async function startServiceHttp(opts: ServiceHttpOptions): Promise<{ port: number; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => { res.status(200).json({ status: 'ok' }); });
  app.get('/readyz', readinessHandler(opts.readiness ?? []));
  let apollo: ApolloServer<SubgraphContext> | undefined;
  if (opts.schema) {
    // loaded only by a process that serves a subgraph (split mode), not with this module (issue 22 §3)
    const [{ ApolloServer: Server }, { ApolloServerPluginInlineTraceDisabled }, { expressMiddleware }] = await Promise.all([
      import('@apollo/server'), import('@apollo/server/plugin/disabled'), import('@as-integrations/express5'),
    ]);
    apollo = new Server<SubgraphContext>({ schema: opts.schema, introspection: false, csrfPrevention: false, includeStacktraceInErrorResponses: false, plugins: [ApolloServerPluginInlineTraceDisabled()] });
    await apollo.start();
    app.use('/graphql', express.json({ limit: '1mb' }), (req, res, next) => {
      if (!sameToken(req.header('x-gatehouse-internal'), opts.internalToken)) {
        res.status(401).json({ code: 'unauthenticated', message: 'unauthorized' });
        return;
      }
      next();
    }, expressMiddleware(apollo, {
      context: async ({ req, res }): Promise<SubgraphContext> => {
        const headers: Record<string, string | undefined> = {};
        for (const key of FORWARDED_HEADERS) headers[key] = req.header(key);
        const setCookies: string[] = [];
        const ctx: SubgraphContext = {
          callContext: {
            headers,
            clientIp: req.header('x-gatehouse-client-ip') ?? req.socket.remoteAddress ?? '',
            protocol: (req.header('x-gatehouse-protocol') ?? 'graphql') as Protocol,
            setCookies,
          },
        };
        const origWriteHead = res.writeHead.bind(res);
        res.writeHead = ((...args: Parameters<typeof res.writeHead>) => {
          if (setCookies.length > 0) res.setHeader('Set-Cookie', setCookies);
          return origWriteHead(...args);
        }) as typeof res.writeHead;
        return ctx;
      },
    }));
  }
  const server = http.createServer(app);
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve((server.address() as { port: number }).port));
  });
  return {
    port,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await apollo?.stop();
    },
  };
}
