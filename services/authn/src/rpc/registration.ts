/**
 * @module @gatehouse/authn/rpc/registration
 * RFC 7591 `POST /oauth/register` and RFC 7592 `GET|PUT|DELETE /oauth/register/<client_id>` as
 * AuthnService RPCs (issue 34): the gateway sends the JSON body as `params` (lists kept as lists), the
 * path's client id as `resource_id`; the answer is an OauthHttpResponse the gateway writes as is.
 * Registrations and deletions are recorded in the audit log (`client.registered`, `client.registration_deleted`).
 */
import { auditRecord } from '@gatehouse/auth';
import type { authn } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import { manageRegisteredClient, registerClient, type RegistrationReply } from '../domain/registration.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

const reply = (r: RegistrationReply): authn.OauthHttpResponse => ({
  status: r.status, body: r.body, frameable: false, ...(r.wwwAuthenticate ? { www_authenticate: r.wwwAuthenticate } : {}),
});

const bearerOf = (ctx: CallContext): string | null => {
  const h = ctx.headers.authorization ?? '';
  return /^bearer /i.test(h) ? h.slice(7).trim() || null : null;
};

/** The JSON body: an object, else `{}` (the domain then refuses the missing metadata). */
const bodyOf = (req: { params?: Record<string, unknown> | null }): Record<string, unknown> =>
  req.params && typeof req.params === 'object' && !Array.isArray(req.params) ? req.params : {};

/** Records a registration action with the client as actor. Best effort: never throws. */
async function record(c: RpcContext, ctx: CallContext, action: string, clientId: string): Promise<void> {
  try {
    const r = auditRecord(ctx, action, { actor: { type: 'service_account', id: clientId }, resourceType: 'service_account', resourceId: clientId, details: {}, at: c.now() });
    await c.users.transaction(async (tx) => { tx.events.emit('audit.recorded', r); });
  } catch (err) {
    c.logger.warn({ err, action }, 'audit event not recorded');
  }
}

/** POST /oauth/register (RFC 7591 §3). */
export const registerClientRpc = (c: RpcContext): AuthnHandler<'RegisterClient'> => async (req, ctx) => {
  if (req.method !== '' && req.method !== 'POST') return reply({ status: 405, body: { error: 'invalid_request', error_description: 'registration is a POST' } });
  const out = await registerClient(c, bodyOf(req), ctx.clientIp);
  if (out.status === 201) await record(c, ctx, 'client.registered', String(out.body!.client_id));
  return reply(out);
};

/** GET, PUT or DELETE /oauth/register/<client_id> (RFC 7592 §2). */
export const manageRegisteredClientRpc = (c: RpcContext): AuthnHandler<'ManageRegisteredClient'> => async (req, ctx) => {
  const id = req.resource_id ?? '';
  const out = await manageRegisteredClient(c, req.method || 'GET', id, bearerOf(ctx), bodyOf(req));
  if (out.status === 204) await record(c, ctx, 'client.registration_deleted', id);
  return reply(out);
};
