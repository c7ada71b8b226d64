/**
 * @module @gatehouse/admin/storage
 * What the admin service stores for webhooks, webhook logs, email templates and the audit log
 * (behaviour.md §5.4, §5.5, §5.7) and the unit of work its writes run in. Implementations: memory
 * (unit tests) and MikroORM (SQLite, PostgreSQL, MySQL, MariaDB); both pass ports.suite.ts.
 */

/** A webhook (behaviour.md §5.4). Times are Unix seconds. */
export interface WebhookRecord {
  id: string;
  eventName: string;
  eventDescription: string;
  endpoint: string;
  enabled: boolean;
  /** string values only, at most 20 (§5.4) */
  headers: Record<string, string>;
  /** `whsec_…`; null for a row carried over without one (signed with --client-secret) */
  signingSecret: string | null;
  createdAt: number;
  updatedAt: number;
}

/** One delivery attempt (behaviour.md §5.4 logging). */
export interface WebhookLogRecord {
  id: string;
  webhookId: string;
  deliveryId: string;
  /** 1-5 */
  attempt: number;
  /** 0 when no HTTP response */
  httpStatus: number;
  request: string;
  response: string;
  createdAt: number;
  updatedAt: number;
}

/** An email template (behaviour.md §5.5); at most one per event. */
export interface EmailTemplateRecord {
  id: string;
  eventName: string;
  subject: string;
  template: string;
  design: string;
  createdAt: number;
  updatedAt: number;
}

/** An audit log row (behaviour.md §5.7). */
export interface AuditLogRecord {
  id: string;
  actorId: string | null;
  actorType: string;
  actorEmail: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  ipAddress: string;
  userAgent: string;
  /** a JSON object as text */
  metadata: string;
  createdAt: number;
}

import type { PageOf, PageWindow } from '@gatehouse/contracts/pagination';

export type { PageOf, PageWindow };

/** `audit_logs` filters (behaviour.md §5.7): exact matches and an inclusive time range. */
export interface AuditFilter {
  action?: string | null;
  actorId?: string | null;
  resourceType?: string | null;
  resourceId?: string | null;
  fromTimestamp?: number | null;
  toTimestamp?: number | null;
}

/** Writes of one transaction; they commit together with the events emitted through `events`. */
export interface AdminTransaction {
  webhooks: {
    insert(w: WebhookRecord): Promise<void>;
    /** replaces the row with the same id; false when it does not exist */
    update(w: WebhookRecord): Promise<boolean>;
    /** deletes the webhook and its logs; false when it does not exist */
    delete(id: string): Promise<boolean>;
  };
  emailTemplates: {
    /** false (nothing written) when the event already has a template */
    insert(t: EmailTemplateRecord): Promise<boolean>;
    /** replaces the row; `conflict` when another template has the new event name */
    update(t: EmailTemplateRecord): Promise<'updated' | 'missing' | 'conflict'>;
    delete(id: string): Promise<boolean>;
  };
  /** writes an envelope to `admin_outbox` in this transaction (ARCHITECTURE §4) */
  events: { emit(name: string, data: unknown): void };
}

export interface AdminStore {
  webhooks: {
    get(id: string): Promise<WebhookRecord | null>;
    /** newest first (created_at desc, then id) */
    list(page: PageWindow): Promise<PageOf<WebhookRecord>>;
    /** the enabled webhooks of one event (delivery trigger, §5.4) */
    enabledFor(eventName: string): Promise<WebhookRecord[]>;
  };
  webhookLogs: {
    /** inserts the row unless one with its id exists; false when it did (a redelivered attempt) */
    insert(log: WebhookLogRecord): Promise<boolean>;
    /** newest first; `webhookId` null lists every webhook's logs */
    list(page: PageWindow, webhookId: string | null): Promise<PageOf<WebhookLogRecord>>;
  };
  emailTemplates: {
    get(id: string): Promise<EmailTemplateRecord | null>;
    findByEvent(eventName: string): Promise<EmailTemplateRecord | null>;
    list(page: PageWindow): Promise<PageOf<EmailTemplateRecord>>;
  };
  auditLogs: {
    /** inserts the row unless one with its id exists; false when it did (a redelivered event) */
    insert(row: AuditLogRecord): Promise<boolean>;
    /** newest first (created_at desc, then id) */
    list(filter: AuditFilter, page: PageWindow): Promise<PageOf<AuditLogRecord>>;
  };
  transaction<T>(fn: (tx: AdminTransaction) => Promise<T>): Promise<T>;
}
