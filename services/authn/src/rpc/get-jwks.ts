/** @module @gatehouse/authn/rpc/get-jwks — AuthnService.GetJwks (GET /.well-known/jwks.json). */
import type { AuthnHandler, RpcContext } from './deps.ts';

/** The RFC 7517 JWK Set of the token-signing public keys; HMAC keys are never published. */
export const getJwksRpc = (c: RpcContext): AuthnHandler<'GetJwks'> => async () => c.jwt.jwks();
