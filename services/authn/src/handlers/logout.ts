/** @module @gatehouse/authn/handlers/logout — the Logout RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { logout } from '../domain/session.ts';

export const logoutHandler = (c: AuthnContext): Handler => (_req, ctx) => logout(c, ctx);
