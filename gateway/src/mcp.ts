/**
 * @module gateway/mcp
 * The MCP endpoint (issue 34 §7), behind `--mcp-enabled`: `POST /mcp` speaks the Model Context
 * Protocol's Streamable HTTP transport (the official TypeScript SDK's server, stateless: one server per
 * request, JSON answers, no MCP session) with the tools of mcp-tools.ts. Gatehouse is an OAuth 2.0
 * resource server for it, as MCP's authorization section asks:
 *
 * - RFC 9728 protected resource metadata at `/.well-known/oauth-protected-resource/mcp`: the resource
 *   (`<url>/mcp`), its authorization server (the issuer, `--url`), the scopes a client should ask for
 *   and `bearer_methods_supported: ["header"]`;
 * - a request without a bearer token gets `401` with `WWW-Authenticate: Bearer resource_metadata="…"`
 *   (RFC 9728 §5.1), an invalid one the same with `error="invalid_token"` (RFC 6750 §3.1);
 * - a token is accepted only when authn validates it (signature, issuer, a live session, an active
 *   user) and its `aud` names `<url>/mcp` (RFC 8707: `resource` at `/authorize` and `/oauth/token`);
 *   a DPoP-bound token is refused (`/mcp` takes bearer tokens only).
 *
 * The gateway asserts nothing: authn's `ValidateJwtToken` judges the token (in-process, or over gRPC in
 * split mode), and each tool's service judges it again, as on /v1.
 */
import type { Express, Request, Response } from 'express';
import { toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import { MAX_BODY_BYTES, readRawBody } from './http/body.ts';
import { sendErrorFor } from './http/errors.ts';
import type * as McpTools from './mcp-tools.ts';
import type * as McpHttp from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { callContextOf, type ServiceClients } from './rest.ts';

/** The path of the MCP endpoint. */
export const MCP_PATH = '/mcp';
/** RFC 9728 §3.1: the metadata of the resource `<url>/mcp`, at the well-known path with the resource's path appended. */
export const MCP_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';
/** The scopes an MCP client asks for (the OpenID scopes a self-registered client may hold; `offline_access` for a refresh token). */
export const MCP_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

/** The URLs of the endpoint for `--url` (without a trailing slash). */
export function mcpUrls(url: string): { resource: string; metadata: string; issuer: string } {
  const base = url.replace(/\/+$/, '');
  return { resource: `${base}${MCP_PATH}`, metadata: `${base}${MCP_METADATA_PATH}`, issuer: url };
}

/**
 * The RFC 9728 §2 protected resource metadata of `/mcp`.
 * @param url `--url`, the issuer
 */
export function protectedResourceMetadata(url: string): Record<string, unknown> {
  const u = mcpUrls(url);
  return {
    resource: u.resource,
    authorization_servers: [u.issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Gatehouse MCP server',
  };
}

/** `Bearer <token>` → the token; any other scheme, or none, → null (RFC 6750 §2.1). */
function bearerOf(header: string | undefined): string | null {
  const m = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i.exec(header ?? '');
  return m ? m[1]! : null;
}

/** A quoted-string value of an auth-param (RFC 9110 §11.2): `"` and `\` escaped. */
const quoted = (v: string): string => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/**
 * Answers 401 with the RFC 6750 §3 / RFC 9728 §5.1 challenge: no `error` when the request carried no
 * bearer token (§3.1: the client did not know it needed one), `invalid_token` and a description otherwise.
 */
function challenge(res: Response, metadataUrl: string, problem: string | null): void {
  const params = [
    ...(problem === null ? [] : [`error="invalid_token"`, `error_description=${quoted(problem)}`]),
    `resource_metadata=${quoted(metadataUrl)}`,
  ];
  res.setHeader('WWW-Authenticate', `Bearer ${params.join(', ')}`);
  res.status(401).json({ code: 'unauthenticated', message: problem ?? 'a bearer token is required' });
}

/** The audience of verified claims as a list (RFC 7519 §4.1.3: a string or an array of strings). */
function audienceOf(claims: Record<string, unknown>): string[] {
  const aud = claims.aud;
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

/** The JSON-RPC 2.0 error answer of a request that never reached the MCP server (§5.1 codes). */
function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * The MCP SDK and the tools, loaded on the first MCP request: the SDK and its zod schemas cost start-up
 * CPU (issue 38 §5) for an endpoint a deployment may never be asked for.
 */
let sdk: Promise<[typeof McpTools, typeof McpHttp]> | undefined;
const loadSdk = (): NonNullable<typeof sdk> => (sdk ??= Promise.all([import('./mcp-tools.ts'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]));

/**
 * Registers `GET /.well-known/oauth-protected-resource/mcp` and `/mcp` (POST served; GET and DELETE
 * answer 405: a stateless server opens no stream and has no session to end).
 */
export function mountMcp(app: Express, clients: ServiceClients, opts: { url: string; version: string; deadlineMs: number; logger: Logger }): void {
  const urls = mcpUrls(opts.url);
  const metadata = protectedResourceMetadata(opts.url);
  app.get(MCP_METADATA_PATH, (_req, res) => {
    res.status(200).json(metadata);
  });

  app.post(MCP_PATH, async (req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = bearerOf(req.headers.authorization);
    if (token === null) {
      challenge(res, urls.metadata, null);
      return;
    }
    const [{ callAs, createMcpServer }, { StreamableHTTPServerTransport }] = await loadSdk();
    const base = callContextOf(req, 'rest', opts.deadlineMs);
    const call = callAs(clients, base, token);
    let claims: Record<string, unknown>;
    try {
      const out = await call('authn', 'ValidateJwtToken', { token_type: 'access_token', token }) as { claims?: Record<string, unknown> | null };
      claims = out.claims ?? {};
    } catch (err) {
      const e = toAppError(err);
      // a token authn will not read (over its length limit) is as invalid as a forged one
      if (e.code === 'unauthenticated' || e.code === 'invalid_argument') {
        challenge(res, urls.metadata, 'the access token is invalid, expired or revoked');
        return;
      }
      if (e.code === 'internal') opts.logger.error({ err }, 'mcp token validation failed');
      sendErrorFor(req, res, e);
      return;
    }
    if (!audienceOf(claims).includes(urls.resource)) {
      challenge(res, urls.metadata, `the access token is not for ${urls.resource} (RFC 8707: ask for it with resource=${urls.resource})`);
      return;
    }
    if (claims.cnf !== undefined) {
      challenge(res, urls.metadata, 'a DPoP-bound access token is not accepted as a bearer token');
      return;
    }

    let body: unknown;
    try {
      body = JSON.parse((await readRawBody(req, MAX_BODY_BYTES)).toString('utf8'));
    } catch (err) {
      if (toAppError(err).reason === 'body_too_large') jsonRpcError(res, 413, -32600, 'request body too large (1 MiB at most)');
      else jsonRpcError(res, 400, -32700, 'Parse error: the body is not JSON');
      return;
    }
    const server = createMcpServer(opts.version, call, opts.logger);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (err) {
      opts.logger.error({ err }, 'mcp request failed');
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal error');
    }
  });

  app.all(MCP_PATH, (_req, res) => {
    res.setHeader('Allow', 'POST');
    jsonRpcError(res, 405, -32000, 'Method not allowed: this server is stateless; send each message with POST');
  });
}
