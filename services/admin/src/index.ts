/**
 * @module @gatehouse/admin
 * The admin service's module (docs/architecture.md): admin sessions, webhooks, email templates, the
 * audit log, clients, trusted issuers and the SAML IdP role (ARCHITECTURE §2), built by the admin-plane
 * issue; today its contract, subgraph and auth checks, the admin session and AdminMeta, webhooks, email
 * templates and the audit log (issue 17).
 */
import type { ServiceModule } from '@gatehouse/service';
import { adminTypeDefs } from './graphql/schema.ts';

export const adminModule: ServiceModule = {
  name: 'admin',
  summary: 'super-admin surface: admin sessions and AdminMeta, webhooks, email templates and the audit log',
  publicApi: 'admin',
  internalApi: 'admin.internal',
  typeDefs: adminTypeDefs,
  calls: ['authn.internal'],
  requires: [
    { key: 'redisUrl', why: 'callers\' sessions are shared through Redis in split mode' },
    { key: 'natsUrl', why: 'the audit log and webhook deliveries consume events from NATS JetStream' },
  ],
  async build(config, shared) {
    const { buildAdmin } = await import('./main.ts');
    return buildAdmin(config, shared);
  },
};
