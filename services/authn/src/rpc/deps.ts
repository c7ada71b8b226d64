/**
 * @module @gatehouse/authn/rpc/deps
 * What every authn RPC handler receives, and the handler types checked against the generated
 * contract (`gatehouse.authn.v1.AuthnService`, `AuthnInternal`).
 */
import type { authn } from '@gatehouse/contracts';
import type { HandlersOf } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';

/** The context of the RPC layer: the domain's. */
export type RpcContext = AuthnContext;

/** The handler of RPC `K` of `gatehouse.authn.v1.AuthnService`, typed by the generated contract. */
export type AuthnHandler<K extends keyof authn.AuthnService> = HandlersOf<authn.AuthnService>[K];

/** The handler of RPC `K` of `gatehouse.authn.v1.AuthnInternal`. */
export type AuthnInternalHandler<K extends keyof authn.AuthnInternal> = HandlersOf<authn.AuthnInternal>[K];
