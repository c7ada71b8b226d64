/** @module @gatehouse/authn/rpc/validate-jwt-token — AuthnService.ValidateJwtToken (POST /v1/validate_jwt_token, behaviour.md §3.5). */
import type { JWTPayload } from '@gatehouse/crypto';
import type { authn } from '@gatehouse/contracts';
import { validateJwtToken } from '../domain/validate.ts';
import type { AuthnHandler, RpcContext } from './deps.ts';

/** The answer to a valid token: failures are errors, never `is_valid: false`. */
const valid = (claims: JWTPayload): authn.ValidateJWTTokenResponse => ({ is_valid: true, claims });

/**
 * The benchmarked hot path: not `async`, the domain's promise is the handler's, and the domain
 * builds the answer with `valid` as its last step.
 * @throws AppError as {@link validateJwtToken}
 */
export const validateJwtTokenRpc = (c: RpcContext): AuthnHandler<'ValidateJwtToken'> => (req) =>
  validateJwtToken(c, {
    tokenType: req.token_type, token: req.token, roles: req.roles, requiredRelations: req.required_relations,
    ...(req.dpop_proof != null ? { dpop: { proof: req.dpop_proof, method: req.dpop_method, url: req.dpop_url } } : {}),
  }, valid);
