/** @module @gatehouse/authn/handlers/get-jwks — the GetJwks RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';

export const getJwksHandler = (c: AuthnContext): Handler => async () => c.jwt.jwks();
