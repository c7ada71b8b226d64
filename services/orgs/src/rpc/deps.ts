/**
 * @module @gatehouse/orgs/rpc/deps
 * What the orgs handlers are built from, the handler types checked against the generated contract,
 * the audit wrapper of every org-scoped admin operation (behaviour.md §5.7: the action, and its
 * `_failed` twin when the operation is refused after the gate), and the wire shapes of the records.
 */
import { actorOf, auditRecord, type AuditActor, type Authenticator } from '@gatehouse/auth';
import type { orgs } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import type { CallContext, HandlersOf } from '@gatehouse/rpc';
import type { OrgsDomainDeps, WithEvents } from '../domain/deps.ts';
import type { TxtResolver } from '../domain/domains.ts';
import type { DomainRecord, MemberRecord, OrganizationRecord, OrgsTransaction } from '../storage/ports.ts';

/** The handlers' dependencies. */
export interface RpcContext extends OrgsDomainDeps {
  /** null: every orgs RPC answers 401 */
  authenticator: Authenticator | null;
  /** TXT lookups for domain verification (`--dns-resolver`, 5 s timeout) */
  dns: TxtResolver;
  logger: Logger;
}

/** The handler of RPC `K` of `gatehouse.orgs.v1.OrgsService`. */
export type OrgsHandler<K extends keyof orgs.OrgsService> = HandlersOf<orgs.OrgsService>[K];
/** The handler of RPC `K` of `gatehouse.orgs.v1.OrgsInternal`. */
export type OrgsInternalHandler<K extends keyof orgs.OrgsInternal> = HandlersOf<orgs.OrgsInternal>[K];

/** Who called an org-scoped RPC (the guard has let it through). */
export interface OrgCaller {
  actor: AuditActor;
  superAdmin: boolean;
}

/** @throws AppError `unauthenticated` `unauthorized` (no credential: the guard refused it already) */
export async function callerOf(c: RpcContext, ctx: CallContext): Promise<OrgCaller> {
  if (!c.authenticator) throw new AppError('unauthenticated', 'unauthorized');
  const caller = await c.authenticator.resolveCaller(ctx);
  return { actor: actorOf(caller), superAdmin: caller.kind === 'admin' };
}

const VERB_OF: Record<string, string> = {
  created: 'create', updated: 'update', deleted: 'delete', added: 'add', removed: 'remove', requested: 'request', verified: 'verify', rotated: 'rotate',
  staged: 'stage', activated: 'activate', retired: 'retire',
};

/**
 * The `_failed` twin of a §5.7 org action, named after the verb as §5.7's example
 * `admin.org_member_add_failed` is: `org_member_added` → `org_member_add_failed`.
 */
export function failedTwin(action: string): string {
  const cut = action.lastIndexOf('_');
  const verb = VERB_OF[action.slice(cut + 1)];
  return verb ? `${action.slice(0, cut)}_${verb}_failed` : `${action}_failed`;
}

/** The §5.7 record of one org-scoped operation: `admin.<action>` with its resource. */
export interface AuditedOp<R> {
  /** `organization_created`, `org_member_added`, … (the `_failed` twin is derived) */
  action: string;
  resourceType: 'organization' | 'org_membership' | 'org_domain' | 'org_oidc_connection' | 'org_saml_connection';
  /** the resource id known before the operation (null: taken from the result) */
  resourceId: string | null;
  /** what the request addressed (`org_id`, `user_id`), in `metadata` of both rows */
  context?: Record<string, unknown>;
  /** the resource id of a result, and the details for `metadata` */
  of(result: R): { resourceId: string; details?: Record<string, unknown> };
}

/**
 * Runs an org-scoped admin operation with its audit row (behaviour.md §5.7): on success
 * `admin.<action>` in the operation's own transaction; on an AppError `admin.<action>_failed` with the
 * error code (its own small transaction; a failure to write it is logged, never returned), named by
 * {@link failedTwin}.
 */
export async function audited<R>(
  c: RpcContext, ctx: CallContext, caller: OrgCaller, op: AuditedOp<R>, run: (withEvents: WithEvents<R>) => Promise<R>,
): Promise<R> {
  try {
    return await run((tx: OrgsTransaction, result: R) => {
      const { resourceId, details } = op.of(result);
      tx.events.emit('audit.recorded', auditRecord(ctx, `admin.${op.action}`, {
        actor: caller.actor, resourceType: op.resourceType, resourceId, details: { ...op.context, ...details },
      }));
    });
  } catch (err) {
    if (err instanceof AppError) {
      const record = auditRecord(ctx, `admin.${failedTwin(op.action)}`, {
        actor: caller.actor, resourceType: op.resourceType, resourceId: op.resourceId ?? undefined, details: { ...op.context, error: err.code, reason: err.message },
      });
      await c.store.transaction(async (tx) => { tx.events.emit('audit.recorded', record); })
        .catch((e: unknown) => c.logger.warn({ err: e, action: record.action }, 'audit row not written'));
    }
    throw err;
  }
}

export const organizationWire = (o: OrganizationRecord): orgs.Organization => ({
  id: o.id, name: o.name, display_name: o.displayName ?? undefined, enabled: o.enabled, created_at: o.createdAt, updated_at: o.updatedAt,
});

export const domainWire = (d: DomainRecord): orgs.OrgDomain => ({
  domain: d.domain, org_id: d.orgId, verified_at: d.verifiedAt ?? undefined, challenge_expires_at: d.challengeExpiresAt ?? undefined,
  created_at: d.createdAt, updated_at: d.updatedAt,
});

/** An OrgMember with the user's email and names from authn (null when the user is gone). */
export async function memberWire(c: RpcContext, m: MemberRecord): Promise<orgs.OrgMember> {
  const user = await c.users.get(m.userId);
  return {
    id: m.id, org_id: m.orgId, user_id: m.userId, email: user?.email ?? undefined, given_name: user?.givenName ?? undefined,
    family_name: user?.familyName ?? undefined, roles: m.roles, created_at: m.createdAt, updated_at: m.updatedAt,
  };
}
