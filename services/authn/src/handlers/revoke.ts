/** @module @gatehouse/authn/handlers/revoke — the Revoke RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { revoke } from '../domain/session.ts';

export const revokeHandler = (c: AuthnContext): Handler => (req) => revoke(c, req);
