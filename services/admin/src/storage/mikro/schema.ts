/**
 * @module @gatehouse/admin/storage/mikro/schema
 * The admin service's tables (`admin_webhooks`, `admin_webhook_logs`, `admin_email_templates`,
 * `admin_audit_logs`): MikroORM entities and the migration that creates them, as one libs/db
 * ServiceSchema. Other admin tables (sessions, clients, …) are appended as their own migrations.
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { MigrationDefinition, ServiceSchema } from '@gatehouse/db';

export const WebhookEntity = defineEntity({
  name: 'AdminWebhook',
  tableName: 'admin_webhooks',
  properties: {
    id: p.uuid().primary(),
    eventName: p.string().length(64).fieldName('event_name'),
    eventDescription: p.text().fieldName('event_description'),
    endpoint: p.text(),
    enabled: p.boolean(),
    headers: p.text(),
    signingSecret: p.string().length(128).fieldName('signing_secret').nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const WebhookLogEntity = defineEntity({
  name: 'AdminWebhookLog',
  tableName: 'admin_webhook_logs',
  properties: {
    id: p.uuid().primary(),
    webhookId: p.uuid().fieldName('webhook_id'),
    deliveryId: p.uuid().fieldName('delivery_id'),
    attempt: p.integer(),
    httpStatus: p.integer().fieldName('http_status'),
    request: p.text(),
    response: p.text(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const EmailTemplateEntity = defineEntity({
  name: 'AdminEmailTemplate',
  tableName: 'admin_email_templates',
  properties: {
    id: p.uuid().primary(),
    eventName: p.string().length(64).fieldName('event_name'),
    subject: p.text(),
    template: p.text(),
    design: p.text(),
    createdAt: p.bigint('number').fieldName('created_at'),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

export const AuditLogEntity = defineEntity({
  name: 'AdminAuditLog',
  tableName: 'admin_audit_logs',
  properties: {
    id: p.uuid().primary(),
    actorId: p.string().length(64).fieldName('actor_id').nullable(),
    actorType: p.string().length(32).fieldName('actor_type'),
    actorEmail: p.string().length(320).fieldName('actor_email').nullable(),
    action: p.string().length(128),
    resourceType: p.string().length(64).fieldName('resource_type').nullable(),
    resourceId: p.string().length(255).fieldName('resource_id').nullable(),
    ipAddress: p.string().length(64).fieldName('ip_address'),
    userAgent: p.text().fieldName('user_agent'),
    metadata: p.text(),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

/** issue 17: webhooks, their logs, email templates, the audit log. */
const webhooksTemplatesAudit: MigrationDefinition = {
  name: '0001_admin_webhooks_templates_audit',
  async up({ ddl }) {
    await ddl.createTable('admin_webhooks', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'event_name', type: 'string', length: 64 },
      { name: 'event_description', type: 'text' },
      { name: 'endpoint', type: 'text' },
      { name: 'enabled', type: 'boolean' },
      { name: 'headers', type: 'text' },
      { name: 'signing_secret', type: 'string', length: 128, nullable: true },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('admin_webhooks', 'admin_webhooks_event_idx', ['event_name']);
    await ddl.createIndex('admin_webhooks', 'admin_webhooks_created_idx', ['created_at', 'id']);
    await ddl.createTable('admin_webhook_logs', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'webhook_id', type: 'uuid' },
      { name: 'delivery_id', type: 'uuid' },
      { name: 'attempt', type: 'int' },
      { name: 'http_status', type: 'int' },
      { name: 'request', type: 'text' },
      { name: 'response', type: 'text' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('admin_webhook_logs', 'admin_webhook_logs_webhook_idx', ['webhook_id', 'created_at']);
    await ddl.createIndex('admin_webhook_logs', 'admin_webhook_logs_created_idx', ['created_at', 'id']);
    await ddl.createTable('admin_email_templates', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'event_name', type: 'string', length: 64 },
      { name: 'subject', type: 'text' },
      { name: 'template', type: 'text' },
      { name: 'design', type: 'text' },
      { name: 'created_at', type: 'bigint' },
      { name: 'updated_at', type: 'bigint' },
    ]);
    await ddl.createIndex('admin_email_templates', 'admin_email_templates_event_idx', ['event_name'], { unique: true });
    await ddl.createTable('admin_audit_logs', [
      { name: 'id', type: 'uuid', primary: true },
      { name: 'actor_id', type: 'string', length: 64, nullable: true },
      { name: 'actor_type', type: 'string', length: 32 },
      { name: 'actor_email', type: 'string', length: 320, nullable: true },
      { name: 'action', type: 'string', length: 128 },
      { name: 'resource_type', type: 'string', length: 64, nullable: true },
      { name: 'resource_id', type: 'string', length: 255, nullable: true },
      { name: 'ip_address', type: 'string', length: 64 },
      { name: 'user_agent', type: 'text' },
      { name: 'metadata', type: 'text' },
      { name: 'created_at', type: 'bigint' },
    ]);
    await ddl.createIndex('admin_audit_logs', 'admin_audit_logs_created_idx', ['created_at', 'id']);
    await ddl.createIndex('admin_audit_logs', 'admin_audit_logs_action_idx', ['action', 'created_at']);
    await ddl.createIndex('admin_audit_logs', 'admin_audit_logs_actor_idx', ['actor_id', 'created_at']);
    await ddl.createIndex('admin_audit_logs', 'admin_audit_logs_resource_idx', ['resource_type', 'resource_id']);
  },
};

/** The schema handed to `openDatabase(options, adminSchema, { logger })`; append new migrations. */
export const adminSchema: ServiceSchema = {
  service: 'admin',
  entities: [WebhookEntity, WebhookLogEntity, EmailTemplateEntity, AuditLogEntity] as unknown as EntitySchema<any, any>[],
  migrations: [webhooksTemplatesAudit],
};
