/**
 * @module @gatehouse/orgs
 * The orgs service's module (docs/architecture.md): organizations, members, domains, SSO connections
 * and SCIM (ARCHITECTURE §2), built by the organizations issue; today its contract, subgraph and auth
 * checks.
 */
import type { ServiceModule } from '@gatehouse/service';
import { orgsTypeDefs } from './graphql/schema.ts';

export const orgsModule: ServiceModule = {
  name: 'orgs',
  publicApi: 'orgs',
  typeDefs: orgsTypeDefs,
  calls: ['authn.internal', 'authz.internal'],
  requires: [{ key: 'redisUrl', why: 'callers\' sessions are shared through Redis in split mode' }],
  async build(config, shared) {
    const { buildOrgs } = await import('./main.ts');
    return buildOrgs(config, shared);
  },
};
