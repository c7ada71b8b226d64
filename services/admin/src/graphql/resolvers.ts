/**
 * @module admin/graphql/resolvers
 * The admin subgraph's root fields → AdminService RPCs (graphql.md §2), for
 * `bindResolvers(serviceDescriptor('admin'), handlers, adminBindings)`: the resolvers call the same
 * handlers as the gRPC server through the same proto codec (ARCHITECTURE §3). The deprecated
 * operations answer their fixed errors instead (graphql.md §1.3).
 */
import { alwaysFails, type FieldBinding, type bindResolvers } from '@gatehouse/rpc';

const p = (rpc: string): FieldBinding => ({ rpc, arg: 'params' });
const none = (rpc: string): FieldBinding => ({ rpc, arg: null });

/** Root field → AdminService RPC and the argument holding its request. */
export const adminBindings = {
  Query: {
    _admin_session: none('AdminSession'),
    _admin_meta: none('AdminMeta'),
    _webhook: p('Webhook'),
    _webhooks: p('Webhooks'),
    _webhook_logs: p('WebhookLogs'),
    _email_templates: p('EmailTemplates'),
    _audit_logs: p('AuditLogs'),
  },
  Mutation: {
    _admin_login: p('AdminLogin'),
    _admin_logout: none('AdminLogout'),
    _add_webhook: p('AddWebhook'),
    _update_webhook: p('UpdateWebhook'),
    _delete_webhook: p('DeleteWebhook'),
    _test_endpoint: p('TestEndpoint'),
    _add_email_template: p('AddEmailTemplate'),
    _update_email_template: p('UpdateEmailTemplate'),
    _delete_email_template: p('DeleteEmailTemplate'),
  },
} satisfies Parameters<typeof bindResolvers>[2];

const ENV_DEPRECATED = 'deprecated. please configure env via cli args';

/**
 * The deprecated operations: always `unimplemented` with these exact messages, with no auth check
 * and no side effects (graphql.md §1.3; spec §7). Merge them into the bound resolvers.
 */
export const adminFixedErrors = {
  Query: {
    _env: alwaysFails('unimplemented', ENV_DEPRECATED),
  },
  Mutation: {
    _update_env: alwaysFails('unimplemented', ENV_DEPRECATED),
    _admin_signup: alwaysFails('unimplemented', 'deprecated. please configure admin secret via cli args'),
    _generate_jwt_keys: alwaysFails('unimplemented', 'deprecated. please configure jwt keys via cli args'),
  },
};
