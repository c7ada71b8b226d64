/** @module @gatehouse/authn/handlers/session — the Session RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { refreshSession } from '../domain/session.ts';

export const sessionHandler = (c: AuthnContext): Handler => (req, ctx) => refreshSession(c, ctx, req);
