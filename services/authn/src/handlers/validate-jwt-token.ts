/** @module @gatehouse/authn/handlers/validate-jwt-token — the ValidateJwtToken RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { validateJwtToken } from '../domain/validate.ts';

export const validateJwtTokenHandler = (c: AuthnContext): Handler => (req) => validateJwtToken(c, req);
