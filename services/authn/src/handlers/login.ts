/** @module @gatehouse/authn/handlers/login — the Login RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { login } from '../domain/login.ts';

export const loginHandler = (c: AuthnContext): Handler => (req, ctx) => login(c, ctx, req);
