/** @module @gatehouse/authn/handlers/verify-email — the VerifyEmail and VerifyEmailLink RPCs (logic in domain/verify-email.ts). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { verifyEmail, verifyEmailLinkTarget } from '../domain/verify-email.ts';

export const verifyEmailHandler = (c: AuthnContext): Handler => (req, ctx) => verifyEmail(c, ctx, req);
/** `GET /verify_email` link target: answers `{redirect_url}`; refusals are in the URL, not thrown. */
export const verifyEmailLinkHandler = (c: AuthnContext): Handler => (req, ctx) => verifyEmailLinkTarget(c, ctx, req);
