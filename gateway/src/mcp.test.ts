/**
 * @module mcp.test
 * The MCP endpoint's resource-server rules (issue 34 §7) behind the gateway's HTTP layer, with the official
 * MCP SDK client and authn/authz stand-ins that judge tokens and record what reached them: the audience
 * (a string or a list naming `<url>/mcp`), a DPoP-bound token refused, only the bearer token forwarded to
 * the tools (never a cookie or the admin secret), the cross-site rule (an Origin-less agent passes, a
 * foreign Origin does not), and JSON-RPC errors for what never reaches the MCP server.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AppError } from '@gatehouse/errors';
import { createLogger, createMetricsRegistry } from '@gatehouse/observability';
import type { CallContext, ServiceClient } from '@gatehouse/rpc';
import { createHttpLayer } from './http/index.ts';
import { MCP_METADATA_PATH, mountMcp } from './mcp.ts';

const URL_FLAG = 'http://127.0.0.1:9';
const RESOURCE = `${URL_FLAG}/mcp`;

/** token → the claims authn's ValidateJwtToken answers; any other token is refused */
const TOKENS: Record<string, Record<string, unknown>> = {
  'for-mcp': { sub: 'u1', aud: RESOURCE },
  'for-mcp-and-api': { sub: 'u1', aud: ['https://api.example.com', RESOURCE] },
  'for-client': { sub: 'u1', aud: 'client-123' },
  'dpop-bound': { sub: 'u1', aud: RESOURCE, cnf: { jkt: 'x'.repeat(43) } },
};

type Recorded = { rpc: string; req: unknown; ctx: CallContext };

function standIn(answer: (rpc: string, req: Record<string, unknown>) => Record<string, unknown>, calls: Recorded[]): ServiceClient {
  return {
    async call(rpc, req, ctx) {
      calls.push({ rpc, req, ctx });
      return answer(rpc, req as Record<string, unknown>);
    },
    close() {},
  };
}

describe('POST /mcp, an OAuth resource server', () => {
  let server: http.Server;
  let base = '';
  const calls: Recorded[] = [];
  let authnDown = false;

  beforeAll(async () => {
    const logger = createLogger('silent');
    const layer = createHttpLayer(
      { allowedOrigins: ['https://app.example.com'], trustedProxies: [], url: URL_FLAG, enableHsts: false, rateLimitRps: 0, rateLimitBurst: 0 },
      { logger, registry: createMetricsRegistry({ defaultMetrics: false }) },
    );
    const authn = standIn((rpc, req) => {
      if (authnDown) throw new AppError('unavailable', 'the authn service is unavailable');
      if (rpc === 'ValidateJwtToken') {
        const claims = TOKENS[String(req.token)];
        if (!claims) throw new AppError('unauthenticated', 'invalid token');
        return { is_valid: true, claims };
      }
      if (rpc === 'Profile') return { id: 'u1', email: 'ada@example.com' };
      return { version: 'test', client_id: 'client-123' };
    }, calls);
    const authz = standIn((_rpc, req) => {
      const checks = req.checks as Array<{ relation: string; object: string }>;
      if (checks.some((c) => !c.object.includes(':'))) throw new AppError('invalid_argument', 'object must be type:id');
      return { results: checks.map((c) => ({ ...c, allowed: c.object === 'doc:1' })) };
    }, calls);
    const app = express();
    for (const mw of layer.before) app.use(mw);
    mountMcp(app, { authn, authz }, { url: URL_FLAG, version: '9.9.9', deadlineMs: 30_000, logger });
    app.use(layer.errorHandler);
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const initialize = (headers: Record<string, string>, body = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  })): Promise<Response> => fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'mcp.test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
    return client;
  }

  it('forwards the bearer token alone to the tools, whatever else the request carries', async () => {
    calls.length = 0;
    const client = await connect({ authorization: 'Bearer for-mcp', cookie: 'cookie_session=abc', 'x-service-admin-secret': 'admin' });
    try {
      expect((await client.callTool({ name: 'profile', arguments: {} })).structuredContent).toEqual({ id: 'u1', email: 'ada@example.com' });
      const checked = await client.callTool({ name: 'check_permissions', arguments: { checks: [{ relation: 'viewer', object: 'doc:1' }, { relation: 'viewer', object: 'doc:2' }] } });
      expect(checked.structuredContent).toEqual({ results: [{ relation: 'viewer', object: 'doc:1', allowed: true }, { relation: 'viewer', object: 'doc:2', allowed: false }] });
      const refused = await client.callTool({ name: 'check_permissions', arguments: { checks: [{ relation: 'viewer', object: 'nope' }] } });
      expect(refused).toMatchObject({ isError: true, content: [{ type: 'text', text: JSON.stringify({ code: 'invalid_argument', message: 'object must be type:id' }) }] });
    } finally {
      await client.close();
    }
    const toolCalls = calls.filter((c) => c.rpc !== 'ValidateJwtToken');
    expect(toolCalls.map((c) => c.rpc)).toEqual(['Profile', 'CheckPermissions', 'CheckPermissions']);
    for (const c of toolCalls) expect(c.ctx.headers).toEqual({ authorization: 'Bearer for-mcp', 'user-agent': expect.any(String) });
    // the subject is never the caller's to choose: no `user` goes to check_permissions
    expect(toolCalls[1]!.req).toEqual({ checks: [{ relation: 'viewer', object: 'doc:1' }, { relation: 'viewer', object: 'doc:2' }] });
  });

  it('accepts an audience list naming the resource; refuses another audience and a DPoP-bound token with invalid_token', async () => {
    expect((await initialize({ authorization: 'Bearer for-mcp-and-api' })).status).toBe(200);
    for (const token of ['for-client', 'dpop-bound', 'unknown']) {
      const res = await initialize({ authorization: `Bearer ${token}` });
      expect({ token, status: res.status }).toEqual({ token, status: 401 });
      expect(res.headers.get('www-authenticate')).toMatch(new RegExp(`^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="${URL_FLAG}${MCP_METADATA_PATH}"$`));
      expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    }
    // no bearer token (none, or another scheme): the challenge without an error (RFC 6750 §3.1)
    for (const headers of [{}, { authorization: 'Basic dTpw' }] as Array<Record<string, string>>) {
      const res = await initialize(headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${URL_FLAG}${MCP_METADATA_PATH}"`);
    }
  });

  it('lets an Origin-less agent through the cross-site check and holds a browser to --allowed-origins', async () => {
    expect((await initialize({ authorization: 'Bearer for-mcp', origin: 'https://app.example.com' })).status).toBe(200);
    const foreign = await initialize({ authorization: 'Bearer for-mcp', origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
  });

  it('answers JSON-RPC errors for a body that is not JSON, other methods, and an unavailable authn', async () => {
    const bad = await initialize({ authorization: 'Bearer for-mcp' }, '{not json');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
    const get = await fetch(`${base}/mcp`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    authnDown = true;
    try {
      const down = await initialize({ authorization: 'Bearer for-mcp' });
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ code: 'unavailable', message: 'the authn service is unavailable' });
    } finally {
      authnDown = false;
    }
  });

  it('serves the RFC 9728 metadata', async () => {
    const res = await fetch(`${base}${MCP_METADATA_PATH}`);
    expect(await res.json()).toEqual({
      resource: RESOURCE, authorization_servers: [URL_FLAG], scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      bearer_methods_supported: ['header'], resource_name: 'Gatehouse MCP server',
    });
  });
});
