/**
 * @module orgs/scim/rpc
 * The SCIM RPCs of OrgsService: the endpoint administration of behaviour.md §6.4
 * (`CreateScimEndpoint`, `RotateScimToken`, `DeleteScimEndpoint`, `ScimEndpoint`; auth class
 * `org_admin`, checked by the guard before the handler; audit `admin.scim_endpoint_created|deleted`,
 * `admin.scim_token_rotated` and their `_failed` twins, §5.7) and `ScimRequest`, the SCIM 2.0 server
 * behind the gateway's `/scim/v2/*` (public: the SCIM token is its credential).
 */
import { actorOf, auditRecord, type Authenticator } from '@gatehouse/auth';
import type { BusEvents, orgs } from '@gatehouse/contracts';
import { toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import type { CallContext, HandlersOf } from '@gatehouse/rpc';
import type { ScimDeps } from './deps.ts';
import { createEndpoint, deleteEndpoint, ENDPOINT_DELETED, endpointWire, getEndpoint, rotateToken } from './endpoints.ts';
import { handleScim } from './server.ts';

type Handlers = HandlersOf<orgs.OrgsService>;
type ScimRpc = 'CreateScimEndpoint' | 'RotateScimToken' | 'DeleteScimEndpoint' | 'ScimEndpoint' | 'ScimRequest';

export interface ScimRpcDeps {
  scim: ScimDeps;
  authenticator: Authenticator | null;
  /** records `audit.recorded` (behaviour.md §5.7) in orgs' outbox, resolving once it is there; never rejects */
  audit(record: BusEvents['audit.recorded']): Promise<void>;
  logger: Logger;
}

/** Runs an admin operation and records its audit action, or the `_failed` twin with the refusal's code. */
async function audited<T>(r: ScimRpcDeps, ctx: CallContext, action: string, orgId: string | null | undefined, run: () => Promise<T>): Promise<T> {
  const actor = async () => {
    const caller = r.authenticator ? await r.authenticator.resolveCaller(ctx).catch(() => null) : null;
    return caller && (caller.kind === 'admin' || caller.kind === 'user') ? actorOf(caller) : { type: 'admin' as const, id: null, email: null };
  };
  try {
    const out = await run();
    await r.audit(auditRecord(ctx, action, { actor: await actor(), resourceType: 'scim_endpoint', resourceId: orgId ?? '', details: { org_id: orgId ?? '' } }));
    return out;
  } catch (err) {
    const code = toAppError(err).code;
    await r.audit(auditRecord(ctx, `${action}_failed`, { actor: await actor(), resourceType: 'scim_endpoint', resourceId: orgId ?? '', details: { org_id: orgId ?? '', code } }));
    throw err;
  }
}

/** The five SCIM handlers of the orgs handler map. */
export function scimHandlers(r: ScimRpcDeps): Pick<Handlers, ScimRpc> {
  const d = r.scim;
  return {
    CreateScimEndpoint: (req, ctx) => audited(r, ctx, 'admin.scim_endpoint_created', req.org_id, async () => {
      const { endpoint, token } = await createEndpoint(d, req.org_id);
      return { scim_endpoint: endpointWire(endpoint), token };
    }),
    RotateScimToken: (req, ctx) => audited(r, ctx, 'admin.scim_token_rotated', req.org_id, async () => {
      const { endpoint, token } = await rotateToken(d, req.org_id);
      return { scim_endpoint: endpointWire(endpoint), token };
    }),
    DeleteScimEndpoint: (req, ctx) => audited(r, ctx, 'admin.scim_endpoint_deleted', req.org_id, async () => {
      await deleteEndpoint(d, req.org_id);
      return { message: ENDPOINT_DELETED };
    }),
    ScimEndpoint: async (req) => endpointWire(await getEndpoint(d, req.org_id)),
    ScimRequest: async (req, ctx) => handleScim(d, ctx, {
      method: req.method, path: req.path, query: req.query, body: req.body, authorization: ctx.headers['authorization'],
      ifMatch: ctx.headers['if-match'], ifNoneMatch: ctx.headers['if-none-match'],
    }, (err) => r.logger.error({ err }, 'scim request failed')),
  };
}
