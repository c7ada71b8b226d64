/**
 * @module orgs/sso/login
 * What the SSO flows share without loading a protocol library (issue 22 §3: `@node-saml/node-saml`
 * and `openid-client` load with the first SAML or OIDC request, not at start-up): the pending-login
 * lifetime, the app's login parameters and the two refusals (behaviour.md §6.3).
 */
import { AppError } from '@gatehouse/errors';

/** How long an SP-initiated login may take at the IdP (s). */
export const PENDING_TTL_S = 600;

/** The login parameters of the app that sent the user (behaviour.md §3.1), carried through the IdP. */
export interface LoginParams {
  redirect_uri?: string;
  state?: string;
  roles?: string;
  scope?: string;
}

/** Why an ACS refused a response: the reason shown in the 400 and in the `saml.acs_failed` audit row. */
export class SamlRejected extends AppError {
  /** the short reason (`invalid signature`, `wrong audience`, `replayed assertion`, …) */
  readonly why: string;
  constructor(why: string) {
    super('invalid_argument', `SAML response rejected: ${why}`);
    this.why = why;
  }
}

/** A refused OIDC callback: 400 `SSO login failed: <reason>`. */
export class SsoRejected extends AppError {
  readonly why: string;
  constructor(why: string) {
    super('invalid_argument', `SSO login failed: ${why}`);
    this.why = why;
  }
}
