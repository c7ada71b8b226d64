/** @module @gatehouse/authn/handlers/validate-session — the ValidateSession RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { validateSession } from '../domain/validate.ts';

export const validateSessionHandler = (c: AuthnContext): Handler => (req) => validateSession(c, req);
