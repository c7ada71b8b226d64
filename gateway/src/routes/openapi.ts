/**
 * @module gateway/routes/openapi Builds the OpenAPI 3.1 document from the route table (ARCHITECTURE §3)
 * and the protos: each route's request and response schema is its RPC's message, derived by
 * @gatehouse/rpc from the same field plans the codec shapes every answer with (issue 15 §8).
 */
import { messageSchema, serviceDescriptor, type JsonSchema, type ServiceClient, type ServiceName } from '@gatehouse/rpc';
import type { AuthClass, Route } from './table.ts';

type Json = Record<string, unknown>;

const SECURITY: Readonly<Record<AuthClass, Json[]>> = {
  public: [],
  user: [{ bearerAuth: [] }, { sessionCookie: [] }, { sessionDomainCookie: [] }],
  mfa: [{ mfaCookie: [] }],
  user_or_mfa: [{ bearerAuth: [] }, { sessionCookie: [] }, { sessionDomainCookie: [] }, { mfaCookie: [] }],
  admin: [{ adminCookie: [] }, { adminSecret: [] }],
  org_admin: [{ adminCookie: [] }, { adminSecret: [] }, { bearerAuth: [] }, { sessionCookie: [] }, { sessionDomainCookie: [] }],
  permissions: [{ bearerAuth: [] }, { sessionCookie: [] }, { sessionDomainCookie: [] }, { adminCookie: [] }, { adminSecret: [] }],
};

/** Error responses every route documents (docs/reference/errors.md); 401 only where credentials apply. */
const ERROR_RESPONSES: readonly [string, string][] = [
  ['400', 'invalid_argument or failed_precondition (includes `invalid JSON body`, `request body too large`)'],
  ['401', 'unauthenticated: missing or invalid credentials'],
  ['403', 'permission_denied (includes the CSRF refusals on state-changing requests)'],
  ['404', 'not_found'],
  ['405', 'method_not_allowed: `Method Not Allowed`'],
  ['409', 'already_exists or aborted'],
  ['429', 'resource_exhausted: rate limit or lockout; `Retry-After` in seconds'],
  ['500', 'internal: `internal error`'],
];

/** What `x-gatehouse-not-served` operations say, and the response they document. */
const NOT_SERVED_DESCRIPTION = 'Not served by this build: the route exists in the contract and answers 501 `unimplemented` until the feature lands.';

/** `<service>.<Rpc>` of a route, the key of {@link OpenApiOptions.notServed}. */
export const operationIdOf = (route: Pick<Route, 'service' | 'rpc'>): string => `${route.service}.${route.rpc}`;

export interface OpenApiOptions {
  version: string;
  serverUrl: string;
  /**
   * Operation ids (`admin.CreateClient`) whose RPC answers `unimplemented`, as the services' handler
   * maps say; those operations carry `x-gatehouse-not-served: true`, the description above and a
   * documented 501.
   */
  notServed?: ReadonlySet<string>;
}

function operation(route: Route, defs: Record<string, JsonSchema>, notServed: boolean): Json {
  const codec = serviceDescriptor(route.service).methods.get(route.rpc)!;
  const responses: Json = {
    '200': {
      description: 'Success: the bare response object, no envelope; every field present, unset ones null (docs/reference/operations.md)',
      content: { 'application/json': { schema: messageSchema(codec.responseType, 'response', defs) } },
    },
  };
  for (const [status] of ERROR_RESPONSES) {
    if (status === '401' && route.auth === 'public') continue;
    responses[status] = { $ref: `#/components/responses/Error${status}` };
  }
  const op: Json = {
    operationId: `${route.service}.${route.rpc}`,
    summary: route.summary,
    tags: [route.service],
    security: SECURITY[route.auth],
    'x-gatehouse-auth': route.auth,
    responses,
  };
  if (route.graphqlField !== undefined) op['x-graphql-field'] = route.graphqlField;
  if (notServed) {
    op['x-gatehouse-not-served'] = true;
    op.description = NOT_SERVED_DESCRIPTION;
    responses['501'] = { $ref: '#/components/responses/Error501' };
  }
  if (route.method === 'POST') {
    op.requestBody = {
      required: false,
      description: 'The request fields at top level, no wrapper; an empty body means {} (docs/reference/operations.md)',
      content: { 'application/json': { schema: messageSchema(codec.requestType, 'request', defs) } },
    };
  }
  return op;
}

/** The HTTP endpoints outside the route table: GraphQL and the probes (issue 15 §8). */
function platformPaths(): Record<string, Json> {
  const json = (schema: Json): Json => ({ 'application/json': { schema } });
  const checks = { type: 'object', additionalProperties: { type: 'string' }, description: 'dependency name → `ok` or `down (<target>): <cause>`' };
  return {
    '/graphql': {
      post: {
        operationId: 'graphql',
        summary: 'Federated GraphQL: one operation per REST route, the same fields (each route\'s `x-graphql-field`; docs/reference/operations.md)',
        tags: ['graphql'],
        requestBody: {
          required: true,
          content: json({
            type: 'object', required: ['query'],
            properties: { query: { type: 'string' }, variables: { type: ['object', 'null'] }, operationName: { type: ['string', 'null'] } },
          }),
        },
        responses: {
          '200': {
            description: 'GraphQL result; errors carry `extensions.code` (docs/reference/errors.md)',
            content: json({ type: 'object', properties: { data: { type: ['object', 'null'] }, errors: { type: 'array', items: { type: 'object' } } } }),
          },
        },
      },
      get: { operationId: 'graphqlPlayground', summary: 'GraphiQL, with --enable-playground, for super-admins (the service-admin cookie or the admin secret header)', tags: ['graphql'], responses: { '200': { description: 'HTML page' } } },
    },
    '/healthz': {
      get: {
        operationId: 'healthz', summary: 'Liveness: the process answers', tags: ['probes'],
        responses: { '200': { description: 'alive', content: json({ type: 'object', properties: { status: { const: 'ok' } } }) } },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readyz', summary: 'Readiness: every dependency of the process answers', tags: ['probes'],
        responses: {
          '200': { description: 'ready', content: json({ type: 'object', properties: { status: { const: 'ready' }, checks } }) },
          '503': {
            description: 'a dependency is down; `message` names the first one',
            content: json({ type: 'object', properties: { code: { const: 'unavailable' }, message: { type: 'string' }, checks } }),
          },
        },
      },
    },
    '/openapi.json': {
      get: { operationId: 'openapi', summary: 'This document', tags: ['probes'], responses: { '200': { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } } },
    },
  };
}

/**
 * An OpenAPI 3.1 document for `table`: one operation per route with operationId
 * `<service>.<Rpc>`, the summary, security requirements per auth class (spec §5), and the
 * `{code, message}` Error schema behind the documented 400/401/403/404/405/409/429/500 responses.
 * Request and response bodies are the RPCs' proto messages as JSON Schema; `/graphql`, `/healthz`,
 * `/readyz` and `/openapi.json` are described too.
 */
export function buildOpenApi(table: readonly Route[], options: OpenApiOptions): Json {
  const paths: Record<string, Json> = platformPaths();
  const defs: Record<string, JsonSchema> = {};
  for (const route of table) {
    const item = paths[route.path] ?? {};
    item[route.method.toLowerCase()] = operation(route, defs, options.notServed?.has(operationIdOf(route)) ?? false);
    paths[route.path] = item;
  }
  const responses: Json = {};
  for (const [status, description] of [...ERROR_RESPONSES, ['501', `unimplemented. ${NOT_SERVED_DESCRIPTION}`] as const]) {
    responses[`Error${status}`] = {
      description,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse',
      version: options.version,
      description: 'Identity and authorization server: the REST surface under /v1. Each operation\'s GraphQL field and gRPC method, who may call it, its fields and its errors are described in docs/reference/ of the Gatehouse repository.',
    },
    servers: [{ url: options.serverUrl }],
    paths,
    components: {
      schemas: {
        ...Object.fromEntries(Object.entries(defs).sort(([a], [b]) => a.localeCompare(b))),
        Error: {
          type: 'object',
          required: ['code', 'message'],
          additionalProperties: false,
          properties: {
            code: { type: 'string', description: 'snake_case error code, the same on REST, GraphQL (`extensions.code`) and gRPC (docs/reference/errors.md)' },
            message: { type: 'string', description: 'human-readable, safe to show' },
          },
        },
      },
      responses,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'cookie_session' },
        sessionDomainCookie: { type: 'apiKey', in: 'cookie', name: 'cookie_session_domain' },
        mfaCookie: { type: 'apiKey', in: 'cookie', name: 'mfa' },
        adminCookie: { type: 'apiKey', in: 'cookie', name: 'service-admin' },
        adminSecret: { type: 'apiKey', in: 'header', name: 'x-service-admin-secret' },
      },
    },
  };
}

/**
 * The operation ids of `table` whose RPC is not served, asked of the services' own handler maps
 * through {@link ServiceClient.served} (one question per RPC, concurrently). A route whose service is
 * not part of the deployment is not served (the router answers `unimplemented`). `complete` is false
 * when a service could not be asked: its routes are then left unmarked.
 */
export async function notServedOperations(
  table: readonly Route[],
  clients: Partial<Record<ServiceName, Pick<ServiceClient, 'served'> | undefined>>,
): Promise<{ notServed: Set<string>; complete: boolean }> {
  const notServed = new Set<string>();
  let complete = true;
  const unique = new Map(table.map((r) => [operationIdOf(r), r]));
  await Promise.all([...unique.entries()].map(async ([id, route]) => {
    const client = clients[route.service];
    try {
      if (!client) notServed.add(id);
      else if (client.served && !(await client.served(route.rpc))) notServed.add(id);
    } catch {
      complete = false;
    }
  }));
  return { notServed, complete };
}
