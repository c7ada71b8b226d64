/** @module @gatehouse/authn/handlers/resend-verify-email — the ResendVerifyEmail RPC (logic in domain/resend.ts). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { resendVerifyEmail } from '../domain/resend.ts';

export const resendVerifyEmailHandler = (c: AuthnContext): Handler => (req) => resendVerifyEmail(c, req);
