/** @module @gatehouse/authn/handlers/password-reset — the ForgotPassword and ResetPassword RPCs (logic in domain/password-reset.ts). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { forgotPassword, resetPassword } from '../domain/password-reset.ts';

export const forgotPasswordHandler = (c: AuthnContext): Handler => (req) => forgotPassword(c, req);
export const resetPasswordHandler = (c: AuthnContext): Handler => (req) => resetPassword(c, req);
