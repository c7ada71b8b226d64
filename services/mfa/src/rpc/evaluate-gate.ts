/** @module @gatehouse/mfa/rpc/evaluate-gate — MfaInternal.EvaluateGate: the gate (behaviour.md §4.1), and the `mfa` cookie it opens. */
import type { mfa } from '@gatehouse/contracts';
import type { CallContext } from '@gatehouse/rpc';
import type { MfaContext } from '../domain/deps.ts';
import { evaluateGate } from '../domain/gate.ts';
import { setMfaCookie } from './cookies.ts';
import { gateAuthResponse } from './gate-response.ts';

/** @throws AppError as {@link evaluateGate} */
export const evaluateGateRpc = (c: MfaContext) => async (req: mfa.EvaluateGateRequest, ctx: CallContext): Promise<mfa.GateDecision> => {
  const d = await evaluateGate(c, {
    user: req.user ?? null, loginMethod: req.login_method, roles: req.roles, scope: req.scope, state: req.state ?? null, authTime: req.auth_time,
  });
  if (d.armed) setMfaCookie(ctx, c.options, d.armed);
  return { outcome: d.outcome, response: d.screens ? gateAuthResponse(d.screens) : null };
};
