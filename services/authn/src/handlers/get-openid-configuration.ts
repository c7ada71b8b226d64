/** @module @gatehouse/authn/handlers/get-openid-configuration — the GetOpenidConfiguration RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { openidConfiguration } from '../domain/meta.ts';

export const getOpenidConfigurationHandler = (c: AuthnContext): Handler => async () => openidConfiguration(c);
