/**
 * @module authz/domain/delegation
 * Permissions of a delegated token (issue 34 §3): when the active model declares `type agent`, an agent
 * acting for a user holds perms(agent) ∩ perms(user): a check is allowed only when both `user:<sub>` and
 * `agent:<client id>` are allowed, and list_permissions answers what both lists hold.
 */
import { parseDsl } from './model-dsl.ts';
import type { CheckResult } from './engine.ts';

/** The model type whose objects are agents (service accounts acting for users). */
export const AGENT_TYPE = 'agent';

/** How check_permissions / list_permissions answer a delegated token (`--delegated-permissions`). */
export type DelegatedPermissions = 'intersection' | 'user';

/** The agent subject of a service account's client id: `agent:<client id>`. */
export const agentSubject = (clientId: string): string => `${AGENT_TYPE}:${clientId}`;

/**
 * Whether a model declares `type agent`.
 * @param dsl the model's DSL text ('' when no model is installed)
 * @returns false for '' or a model that does not parse
 */
export function declaresAgentType(dsl: string): boolean {
  if (dsl === '') return false;
  try {
    return parseDsl(dsl).type_definitions.some((t) => t.type === AGENT_TYPE);
  } catch {
    return false;
  }
}

/**
 * perms(user) ∩ perms(agent) for one batch of checks: each result allowed only when both are.
 * @param user the user's results; @param agent the agent's results for the same checks, same order
 * @throws Error when the batches differ in length (a programming error)
 */
export function intersectChecks(user: CheckResult[], agent: CheckResult[]): CheckResult[] {
  if (user.length !== agent.length) throw new Error('intersectChecks: the two batches differ in length');
  return user.map((r, i) => (r.allowed && !agent[i]!.allowed ? { ...r, allowed: false } : r));
}

/** A list_permissions answer (behaviour.md §7.3). */
export interface PermissionList {
  objects: string[];
  permissions: Array<{ object: string; relation: string }>;
  truncated: boolean;
}

/**
 * perms(user) ∩ perms(agent) for list_permissions: the user's entries the agent also holds, in the user's
 * order; `objects` the distinct objects of those; `truncated` when either list was (the intersection of
 * two capped lists may then miss entries).
 */
export function intersectPermissions(user: PermissionList, agent: PermissionList): PermissionList {
  const held = new Set(agent.permissions.map((p) => `${p.relation}\u0000${p.object}`));
  const permissions = user.permissions.filter((p) => held.has(`${p.relation}\u0000${p.object}`));
  return { objects: [...new Set(permissions.map((p) => p.object))], permissions, truncated: user.truncated || agent.truncated };
}
