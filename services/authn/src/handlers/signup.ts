/** @module @gatehouse/authn/handlers/signup — the Signup RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { signup } from '../domain/signup.ts';

export const signupHandler = (c: AuthnContext): Handler => (req, ctx) => signup(c, ctx, req);
