/** @module @gatehouse/authn/handlers/profile — the Profile RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { profile } from '../domain/profile.ts';

export const profileHandler = (c: AuthnContext): Handler => (_req, ctx) => profile(c, ctx);
