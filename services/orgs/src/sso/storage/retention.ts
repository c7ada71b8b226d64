/**
 * @module orgs/sso/storage/retention
 * The SSO tables' retention rules (issue 23's sweeper, started in `buildOrgs`): a pending login is
 * useless once expired (`take` refuses it), and a consumed assertion id only has to outlive the
 * assertion's validity (`consumeAssertion` stores that expiry). Connections have no rule: they go with
 * their organization. Times are Unix seconds.
 */
import type { RetentionRule } from '@gatehouse/db';

export const SSO_RETENTION: readonly RetentionRule[] = [
  { table: 'orgs_sso_pending', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
  { table: 'orgs_saml_assertions', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
];
