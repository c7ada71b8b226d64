/** @module @gatehouse/authn/handlers/magic-link-login — the MagicLinkLogin RPC (logic in domain/magic-link.ts). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { magicLinkLogin } from '../domain/magic-link.ts';

export const magicLinkLoginHandler = (c: AuthnContext): Handler => (req) => magicLinkLogin(c, req);
