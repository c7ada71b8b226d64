/** @module @gatehouse/authn/handlers/meta — the Meta RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { meta } from '../domain/meta.ts';

export const metaHandler = (c: AuthnContext): Handler => async () => meta(c);
