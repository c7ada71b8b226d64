/**
 * @module @gatehouse/auth/delegation
 * Delegated access tokens (issue 34 §3): an access token issued by RFC 8693 token exchange carries an
 * `act` claim naming the agent (a service account, `service_account:<client_id>`) acting for the user in
 * `sub`. Three rules follow from it, shared by every service:
 *  - the current actor is the top-level `act.sub` only; nested `act` claims name prior actors and are
 *    informational (RFC 8693 §4.1);
 *  - a delegated token may call an RPC that only reads (`idempotency_level = NO_SIDE_EFFECTS` in its
 *    proto); a mutating one needs an explicit scope, `gatehouse:write` (every operation) or
 *    `gatehouse:<operation>` (one operation, e.g. `gatehouse:update_profile`), else 403
 *    `permission_denied` ({@link requireDelegatedScope});
 *  - the audit rows of a call made with it name the agent as actor and the user in metadata
 *    ({@link delegationOfCall}, read by `auditRecord`).
 */
import { AppError } from '@gatehouse/errors';
import type { CallContext, GuardedCall } from '@gatehouse/rpc';

/** The scope that lets a delegated token call every mutating first-party operation. */
export const DELEGATED_WRITE_SCOPE = 'gatehouse:write';
/** Per-operation scopes: `gatehouse:<operation>`, the operation's snake_case name (`gatehouse:update_profile`). */
export const OPERATION_SCOPE_PREFIX = 'gatehouse:';

/** Who acts, for whom, in a delegated token. */
export interface Delegation {
  /** the user the token acts for (`sub`) */
  readonly userId: string;
  /** the current actor's client id (the agent's service account) */
  readonly clientId: string;
  /** the current actor, `service_account:<client_id>` (`act.sub`) */
  readonly agent: string;
  /** every actor of the `act` chain, current first (RFC 8693 §4.1) */
  readonly chain: readonly string[];
}

const SERVICE_ACCOUNT = 'service_account:';

/**
 * The delegation an access token's verified claims carry, or null when it has no `act` claim.
 * @param claims verified JWT claims (`sub`, `act`)
 * @returns null also when `act` has no string `sub` (then the token acts for nobody but its subject)
 */
export function delegationOfClaims(claims: { sub?: unknown; act?: unknown } | undefined): Delegation | null {
  const act = claims?.act;
  if (!act || typeof act !== 'object' || typeof (act as { sub?: unknown }).sub !== 'string' || typeof claims?.sub !== 'string') return null;
  const chain: string[] = [];
  let cur: unknown = act;
  while (cur && typeof cur === 'object' && typeof (cur as { sub?: unknown }).sub === 'string') {
    chain.push((cur as { sub: string }).sub);
    cur = (cur as { act?: unknown }).act;
  }
  const agent = chain[0]!;
  const named = (act as { client_id?: unknown }).client_id;
  const clientId = agent.startsWith(SERVICE_ACCOUNT) ? agent.slice(SERVICE_ACCOUNT.length) : typeof named === 'string' ? named : agent;
  return Object.freeze({ userId: claims.sub, clientId, agent, chain: Object.freeze(chain) });
}

/** `UpdateProfile` → `update_profile`: the operation's name in scopes and messages. */
export function operationName(rpc: string): string {
  return rpc.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * The scope rule of delegated tokens (issue 34 §3): a read-only RPC passes; a mutating one passes only
 * when `scope` holds {@link DELEGATED_WRITE_SCOPE} or `gatehouse:<operation>`.
 * @param delegation the caller's delegation; null (not delegated) always passes
 * @param scope the token's granted scopes
 * @param call the RPC being called; absent (a direct guard call without one) counts as mutating
 * @throws AppError `permission_denied` naming the operation and the scopes that would allow it
 */
export function requireDelegatedScope(delegation: Delegation | null | undefined, scope: readonly string[], call: GuardedCall | undefined): void {
  if (!delegation || call?.readOnly === true) return;
  const op = call ? operationName(call.rpc) : 'this operation';
  if (scope.includes(DELEGATED_WRITE_SCOPE) || (call && scope.includes(`${OPERATION_SCOPE_PREFIX}${op}`))) return;
  throw new AppError('permission_denied', `a delegated token may not call ${op} without the ${DELEGATED_WRITE_SCOPE} or ${OPERATION_SCOPE_PREFIX}${op} scope`, { reason: 'delegated_scope' });
}

// The delegation of each call made with a delegated bearer token, recorded by the authenticator when it
// resolves the caller, read by auditRecord: keyed by the call, so nothing outlives it.
const delegations = new WeakMap<CallContext, Delegation>();

/** Records that `ctx` was made with a delegated token (the authenticator calls it). */
export function noteDelegation(ctx: CallContext, delegation: Delegation | null | undefined): void {
  if (delegation) delegations.set(ctx, delegation);
}

/** The delegation of the call `ctx`, once its caller has been resolved; null when none. */
export function delegationOfCall(ctx: CallContext): Delegation | null {
  return delegations.get(ctx) ?? null;
}
