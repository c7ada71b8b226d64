/**
 * @module @gatehouse/orgs
 * The orgs service's module (docs/architecture.md): organizations, members and verified domains
 * (ARCHITECTURE §2); SSO connections and SCIM follow.
 */
import type { ServiceModule } from '@gatehouse/service';
import { orgsTypeDefs } from './graphql/schema.ts';

export const orgsModule: ServiceModule = {
  name: 'orgs',
  summary: 'organizations, members, verified domains, SCIM 2.0, org SSO connections (OIDC and SAML) and the SAML identity provider',
  publicApi: 'orgs',
  typeDefs: orgsTypeDefs,
  internalApi: 'orgs.internal',
  calls: ['authn.internal', 'authz.internal'],
  requires: [
    { key: 'redisUrl', why: 'callers\' sessions are shared through Redis in split mode' },
    { key: 'natsUrl', why: 'user.deleted is consumed from, and the audit log and organization.deleted published to, NATS JetStream' },
  ],
  async build(config, shared) {
    const { buildOrgs } = await import('./main.ts');
    return buildOrgs(config, shared);
  },
  async reseal(config, logger) {
    const { resealOrgs } = await import('./main.ts');
    return resealOrgs(config, logger);
  },
};
