/**
 * @module gateway/mcp-tools
 * The tools of the MCP endpoint (issue 34 §7): `check_permissions`, `list_permissions`, `profile` and
 * `meta`, each one call of the first-party operation of the same name (`POST /v1/check_permissions`,
 * `POST /v1/list_permissions`, `GET /v1/profile`, `GET /v1/meta`) through the service's client, in-process
 * or over gRPC, with the MCP request's bearer token as its only credential. The services authenticate
 * the token and pin the subject exactly as on /v1, so a tool answers for the token's user and no one else.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError, toAppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { Logger } from '@gatehouse/observability';
import type { ServiceClients } from './rest.ts';
import type { ServiceName } from './routes/table.ts';

/** Every tool is a read (MCP `ToolAnnotations`): it changes nothing and asks only Gatehouse. */
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The object of a permission check, `type:id` (the authorization model's words). */
const objectRef = z.string().min(1).max(512).describe('the object, as type:id (e.g. doc:roadmap)');
const relation = z.string().min(1).max(256).describe('the relation of the authorization model (e.g. viewer)');

/**
 * One MCP server for one HTTP request (the endpoint is stateless: no MCP session outlives its request).
 * @param call runs one RPC with the request's credentials
 */
export function createMcpServer(
  version: string,
  call: (service: ServiceName, rpc: string, body: Record<string, unknown>) => Promise<unknown>,
  logger: Logger,
): McpServer {
  const server = new McpServer({ name: 'gatehouse', title: 'Gatehouse', version });

  /** A tool's answer: the operation's JSON as text and as structured content; a refusal as a tool error. */
  const answer = async (service: ServiceName, rpc: string, body: Record<string, unknown>): Promise<CallToolResult> => {
    try {
      const out = (await call(service, rpc, body)) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    } catch (err) {
      const e = toAppError(err);
      if (e.code === 'internal') logger.error({ err, rpc }, 'mcp tool failed');
      // the same {code, message} a /v1 caller would read, never a cause or a stack
      return { isError: true, content: [{ type: 'text', text: JSON.stringify({ code: e.code, message: e.message }) }] };
    }
  };

  server.registerTool('check_permissions', {
    title: 'Check permissions',
    description: 'Checks 1 to 100 permissions of the signed-in user against the authorization model: may the user have `relation` on `object`? Answers each check with allowed true or false.',
    inputSchema: { checks: z.array(z.object({ relation, object: objectRef })).min(1).max(100).describe('the checks, 1 to 100') },
    annotations: READ_ONLY,
  }, ({ checks }) => answer('authz', 'CheckPermissions', { checks }));

  server.registerTool('list_permissions', {
    title: 'List permissions',
    description: 'Lists the objects on which the signed-in user holds a relation, optionally only one relation and one object type (at most 1000; truncated says when the list was cut).',
    inputSchema: {
      relation: relation.optional(),
      object_type: z.string().min(1).max(256).optional().describe('only objects of this type (e.g. doc)'),
    },
    annotations: READ_ONLY,
  }, ({ relation: r, object_type: t }) => answer('authz', 'ListPermissions', { ...(r ? { relation: r } : {}), ...(t ? { object_type: t } : {}) }));

  server.registerTool('profile', {
    title: 'Profile',
    description: 'The signed-in user\'s account: id, email, names, phone number, roles, verification and MFA state.',
    annotations: READ_ONLY,
  }, () => answer('authn', 'Profile', {}));

  server.registerTool('meta', {
    title: 'Server capabilities',
    description: 'What this Gatehouse server offers: its version, client id, the login methods and MFA methods that are enabled.',
    annotations: READ_ONLY,
  }, () => answer('authn', 'Meta', {}));

  return server;
}

/**
 * Runs `rpc` of `service` for the MCP caller: its bearer token is the only header forwarded (no cookie,
 * no admin secret: an MCP token acts for its user alone, whatever else the request carries).
 * @throws AppError `unavailable` when the service is not part of this deployment; the RPC's own errors
 */
export function callAs(clients: ServiceClients, base: CallContext, token: string) {
  return async (service: ServiceName, rpc: string, body: Record<string, unknown>): Promise<unknown> => {
    const client = clients[service];
    if (!client) throw new AppError('unavailable', `the ${service} service is not part of this deployment`);
    const ctx: CallContext = { ...base, headers: { authorization: `Bearer ${token}`, 'user-agent': base.headers['user-agent'] }, setCookies: [] };
    return client.call(rpc, body, ctx);
  };
}
