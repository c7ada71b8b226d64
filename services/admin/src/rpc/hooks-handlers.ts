/**
 * @module @gatehouse/admin/rpc/hooks-handlers
 * The handlers of issue 17's webhook, email-template and audit-log RPCs (behaviour.md §5.4, §5.5,
 * §5.7), as one group that service.ts spreads into the admin handler map.
 */
import type { admin } from '@gatehouse/contracts';
import type { HandlersOf } from '@gatehouse/rpc';
import { addEmailTemplateRpc } from './add-email-template.ts';
import { addWebhookRpc } from './add-webhook.ts';
import { auditLogsRpc } from './audit-logs.ts';
import { deleteEmailTemplateRpc } from './delete-email-template.ts';
import { deleteWebhookRpc } from './delete-webhook.ts';
import type { RpcContext } from './deps.ts';
import { emailTemplatesRpc } from './email-templates.ts';
import { storedEmailTemplateRpc } from './stored-email-template.ts';
import { testEndpointRpc } from './test-endpoint.ts';
import { updateEmailTemplateRpc } from './update-email-template.ts';
import { updateWebhookRpc } from './update-webhook.ts';
import { webhookLogsRpc } from './webhook-logs.ts';
import { webhookTargetRpc } from './webhook-target.ts';
import { webhookRpc } from './webhook.ts';
import { webhooksRpc } from './webhooks.ts';

type HookRpc = 'AddWebhook' | 'UpdateWebhook' | 'DeleteWebhook' | 'Webhook' | 'Webhooks' | 'WebhookLogs' | 'TestEndpoint'
  | 'AddEmailTemplate' | 'UpdateEmailTemplate' | 'DeleteEmailTemplate' | 'EmailTemplates' | 'AuditLogs';

/** The public RPCs of this group. */
export function hookHandlers(c: RpcContext): Pick<HandlersOf<admin.AdminService>, HookRpc> {
  return {
    AddWebhook: addWebhookRpc(c),
    UpdateWebhook: updateWebhookRpc(c),
    DeleteWebhook: deleteWebhookRpc(c),
    Webhook: webhookRpc(c),
    Webhooks: webhooksRpc(c),
    WebhookLogs: webhookLogsRpc(c),
    TestEndpoint: testEndpointRpc(c),
    AddEmailTemplate: addEmailTemplateRpc(c),
    UpdateEmailTemplate: updateEmailTemplateRpc(c),
    DeleteEmailTemplate: deleteEmailTemplateRpc(c),
    EmailTemplates: emailTemplatesRpc(c),
    AuditLogs: auditLogsRpc(c),
  };
}

/** The internal RPCs the notifications worker calls. */
export function hookInternalHandlers(c: RpcContext): Pick<HandlersOf<admin.AdminInternal>, 'WebhookTarget' | 'StoredEmailTemplate'> {
  return { WebhookTarget: webhookTargetRpc(c), StoredEmailTemplate: storedEmailTemplateRpc(c) };
}
