/** @module @gatehouse/authn/handlers/update-profile — the UpdateProfile RPC (wire JSON in, wire JSON out; logic lives in domain/). */
import type { Handler } from '@gatehouse/rpc';
import type { AuthnContext } from '../domain/deps.ts';
import { updateProfile } from '../domain/profile.ts';

export const updateProfileHandler = (c: AuthnContext): Handler => (req, ctx) => updateProfile(c, ctx, req);
