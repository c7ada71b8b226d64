/** @module gateway/routes/openapi Builds the OpenAPI 3.1 document from the route table (ARCHITECTURE §3). */
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

/** Error responses every route documents (behaviour.md §0.2); 401 only where credentials apply. */
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

function operation(route: Route): Json {
  const responses: Json = {
    '200': {
      description: 'Success: the bare response object, no envelope (spec §1)',
      content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
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
  if (route.method === 'POST') {
    op.requestBody = {
      required: false,
      description: 'The request fields at top level, no wrapper; an empty body means {} (behaviour.md §0.1)',
      content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
    };
  }
  return op;
}

/**
 * An OpenAPI 3.1 document for `table`: one operation per route with operationId
 * `<service>.<Rpc>`, the summary, security requirements per auth class (spec §5), and the
 * `{code, message}` Error schema behind the documented 400/401/403/404/405/409/429/500 responses.
 * Request and response bodies are generic objects until the proto-derived schemas exist.
 */
export function buildOpenApi(table: readonly Route[], options: { version: string; serverUrl: string }): Json {
  const paths: Record<string, Json> = {};
  for (const route of table) {
    const item = paths[route.path] ?? {};
    item[route.method.toLowerCase()] = operation(route);
    paths[route.path] = item;
  }
  const responses: Json = {};
  for (const [status, description] of ERROR_RESPONSES) {
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
      description: 'Identity and authorization server: REST surface under /v1 (service-spec.md §4).',
    },
    servers: [{ url: options.serverUrl }],
    paths,
    components: {
      schemas: {
        Error: {
          type: 'object',
          required: ['code', 'message'],
          additionalProperties: false,
          properties: {
            code: { type: 'string', description: 'snake_case gRPC status token (spec §7)' },
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
