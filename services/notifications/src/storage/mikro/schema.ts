/**
 * @module @gatehouse/notifications/storage/mikro/schema
 * The notifications service's tables (`notification_attempts`, `notification_jobs`): MikroORM
 * entities and the migrations that create them, as one libs/db ServiceSchema.
 */
import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import type { ServiceSchema } from '@gatehouse/db';

export const NotificationAttempt = defineEntity({
  name: 'NotificationAttempt',
  tableName: 'notification_attempts',
  properties: {
    id: p.uuid().primary(),
    jobId: p.string().length(64).fieldName('job_id'),
    channel: p.string().length(16),
    eventName: p.string().length(64).fieldName('event_name'),
    recipient: p.string().length(320),
    attempt: p.integer(),
    outcome: p.string().length(16),
    error: p.text().nullable(),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

export const NotificationJob = defineEntity({
  name: 'NotificationJob',
  tableName: 'notification_jobs',
  properties: {
    jobId: p.string().length(64).primary().fieldName('job_id'),
    channel: p.string().length(16),
    eventName: p.string().length(64).fieldName('event_name'),
    status: p.string().length(16),
    error: p.text().nullable(),
    updatedAt: p.bigint('number').fieldName('updated_at'),
  },
});

/** The schema handed to `openDatabase(options, notificationsSchema, { logger })`. */
export const notificationsSchema: ServiceSchema = {
  service: 'notifications',
  entities: [NotificationAttempt, NotificationJob] as unknown as EntitySchema<any, any>[],
  migrations: [
    {
      name: '0001_notification_attempts_and_jobs',
      async up({ ddl }) {
        await ddl.createTable('notification_attempts', [
          { name: 'id', type: 'uuid', primary: true },
          { name: 'job_id', type: 'string', length: 64 },
          { name: 'channel', type: 'string', length: 16 },
          { name: 'event_name', type: 'string', length: 64 },
          { name: 'recipient', type: 'string', length: 320 },
          { name: 'attempt', type: 'int' },
          { name: 'outcome', type: 'string', length: 16 },
          { name: 'error', type: 'text', nullable: true },
          { name: 'created_at', type: 'bigint' },
        ]);
        await ddl.createIndex('notification_attempts', 'notification_attempts_job_idx', ['job_id', 'attempt']);
        await ddl.createTable('notification_jobs', [
          { name: 'job_id', type: 'string', length: 64, primary: true },
          { name: 'channel', type: 'string', length: 16 },
          { name: 'event_name', type: 'string', length: 64 },
          { name: 'status', type: 'string', length: 16 },
          { name: 'error', type: 'text', nullable: true },
          { name: 'updated_at', type: 'bigint' },
        ]);
        await ddl.createIndex('notification_jobs', 'notification_jobs_status_idx', ['status', 'updated_at']);
      },
    },
    {
      // issue 23: the columns the retention sweeper filters on (storage/mikro/retention.ts)
      name: '0002_notifications_retention_indexes',
      async up({ ddl }) {
        await ddl.createIndex('notification_attempts', 'notification_attempts_created_idx', ['created_at']);
        await ddl.createIndex('notification_jobs', 'notification_jobs_updated_idx', ['updated_at']);
      },
    },
  ],
};
