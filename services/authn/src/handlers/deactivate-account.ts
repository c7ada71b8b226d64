/** @module @gatehouse/authn/handlers/deactivate-account — the DeactivateAccount RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { deactivateAccount } from '../domain/profile.ts';

export const deactivateAccountHandler = (c: AuthnContext): Handler => (_req, ctx) => deactivateAccount(c, ctx);
