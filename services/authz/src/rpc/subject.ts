/**
 * @module authz/rpc/subject
 * Subject pinning for check_permissions and list_permissions (spec §5 "Subject pinning for permission
 * endpoints", behaviour.md §7.2): the subject is the caller's own unless a super-admin names one.
 */
import { AppError } from '@gatehouse/errors';
import type { Authenticator } from '@gatehouse/auth';
import type { CallContext } from '@gatehouse/rpc';
import { agentSubject, declaresAgentType, parseCheckSubject, parseSubject, type DelegatedPermissions, type Engine } from '../domain/index.ts';

/**
 * Resolves the subject of check_permissions / list_permissions (behaviour.md §7.2).
 * @param explicit the request's `user`; null, undefined or '' when absent
 * @returns `type:id` (or, for a super-admin, a userset `type:id#relation` or wildcard `type:*`)
 * @throws AppError `unauthenticated`; `invalid_argument` (super-admin without `user`, malformed user);
 *   `permission_denied` `not authorized to query authorization for another subject`
 */
export async function pinSubject(authenticator: Authenticator, ctx: CallContext, explicit: string | null | undefined): Promise<string> {
  return (await pinSubjects(authenticator, ctx, explicit)).subject;
}

/** The pinned subject, and the caller's delegation when it has one (issue 34 §3). */
interface Pinned {
  subject: string;
  /** the agent's client id when the caller's token was delegated (RFC 8693 `act`) */
  agentClientId: string | null;
}

async function pinSubjects(authenticator: Authenticator, ctx: CallContext, explicit: string | null | undefined): Promise<Pinned> {
  const caller = await authenticator.resolveCaller(ctx);
  const absent = explicit === null || explicit === undefined || explicit === '';
  if (caller.kind === 'admin') {
    if (absent) throw new AppError('invalid_argument', 'user is required when calling as super-admin');
    // §7.2: a super-admin may name a userset (`group:eng#member`) or a typed wildcard (`user:*`)
    return { subject: parseCheckSubject(explicit).key, agentClientId: null };
  }
  const given = absent ? null : parseSubject(explicit);
  // a client_credentials token's subject (behaviour.md §7.2)
  const own = caller.kind === 'service_account' ? caller.subject : `user:${caller.userId}`;
  if (given !== null && given !== own) {
    throw new AppError('permission_denied', 'not authorized to query authorization for another subject');
  }
  return { subject: own, agentClientId: caller.kind === 'user' ? caller.delegation?.clientId ?? null : null };
}

/** Who check_permissions / list_permissions answer for: the pinned subject, and the agent to intersect with. */
export interface PermissionSubjects {
  /** the pinned subject (see {@link pinSubject}) */
  subject: string;
  /**
   * `agent:<client id>` when the caller's token is delegated (RFC 8693 `act`), the active model declares
   * `type agent` and `--delegated-permissions` is `intersection`: every answer is then perms(subject) ∩
   * perms(agent) (issue 34 §3). null otherwise: the subject's own answer.
   */
  agent: string | null;
}

/**
 * {@link pinSubject}, and the agent a delegated token's answers are intersected with (issue 34 §3).
 * The model is read only for a delegated caller.
 * @param mode `--delegated-permissions` (`user`: no agent, the user's permissions as before)
 * @throws AppError as pinSubject; `unavailable` when the model cannot be read
 */
export async function pinPermissionSubjects(authenticator: Authenticator, engine: Engine, mode: DelegatedPermissions, ctx: CallContext, explicit: string | null | undefined): Promise<PermissionSubjects> {
  const pinned = await pinSubjects(authenticator, ctx, explicit);
  if (pinned.agentClientId === null || mode === 'user') return { subject: pinned.subject, agent: null };
  const model = await engine.getModel();
  return { subject: pinned.subject, agent: modelDeclaresAgent(model) ? agentSubject(pinned.agentClientId) : null };
}

// A model version never changes once written: whether it declares `type agent` is parsed once per version id.
const agentTypeOfModel = new Map<string, boolean>();
const AGENT_TYPE_MEMO_SIZE = 64;

function modelDeclaresAgent(model: { id: string; dsl: string }): boolean {
  const known = agentTypeOfModel.get(model.id);
  if (known !== undefined) return known;
  const declares = declaresAgentType(model.dsl);
  if (model.id === '') return declares;
  if (agentTypeOfModel.size >= AGENT_TYPE_MEMO_SIZE) agentTypeOfModel.delete(agentTypeOfModel.keys().next().value!);
  agentTypeOfModel.set(model.id, declares);
  return declares;
}
