/**
 * @module orgs/sso/identity
 * What an org's IdP asserted about a user, in the shape the federated completion takes, and the rule
 * that decides whether its email counts as verified (issue 20; behaviour.md §6.2, §6.3):
 *
 * - an email whose domain this organization has verified (§6.2) is treated as verified: the org's
 *   IdP is trusted for the domains the org proved it owns;
 * - otherwise the IdP's own statement decides: OIDC `email_verified: true`; SAML has no standard
 *   equivalent, so a SAML email outside the org's verified domains is unverified.
 */
import type { SsoDeps } from './deps.ts';

export interface FederatedIdentity {
  /** the IdP's issuer (OIDC `iss`) or entity id (SAML) */
  issuer: string;
  /** the IdP's stable subject (OIDC `sub`, SAML NameID) */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  givenName: string | null;
  familyName: string | null;
}

/** The domain part of an email, lower-cased; null when it has none. */
const domainOf = (email: string): string | null => {
  const at = email.lastIndexOf('@');
  return at > 0 && at < email.length - 1 ? email.slice(at + 1).toLowerCase() : null;
};

/**
 * Whether `email` counts as verified for a login through org `orgId`'s IdP (module rule).
 * @param idpSaysVerified the IdP's own claim (OIDC `email_verified === true`; always false for SAML)
 */
export async function emailVerifiedFor(d: Pick<SsoDeps, 'orgs'>, orgId: string, email: string | null, idpSaysVerified: boolean): Promise<boolean> {
  if (!email) return false;
  if (idpSaysVerified) return true;
  const domain = domainOf(email);
  if (!domain) return false;
  return (await d.orgs.domains.verified(domain))?.orgId === orgId;
}
