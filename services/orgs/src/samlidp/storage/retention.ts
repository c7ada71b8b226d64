/**
 * @module orgs/samlidp/storage/retention
 * The SAML IdP tables' retention rules (issue 23's sweeper, started in `buildOrgs`), issue 31: a session
 * participant is useless once its browser session has expired (`expires_at` is the session's expiry),
 * a waiting Single Logout once its hop has expired (`take` refuses both then). Times are Unix seconds.
 */
import type { RetentionRule } from '@gatehouse/db';

export const SAML_IDP_RETENTION: readonly RetentionRule[] = [
  { table: 'orgs_saml_idp_participants', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
  { table: 'orgs_saml_idp_logouts', key: 'id', expired: { column: 'expires_at', before: (now) => now } },
];
