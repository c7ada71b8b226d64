/**
 * @module @gatehouse/admin/storage/mikro/store
 * {@link AdminStore} on MikroORM through libs/db (SQLite, PostgreSQL, MySQL, MariaDB).
 */
import { IsolationLevel, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import { newEnvelope } from '@gatehouse/bus';
import type { Database } from '@gatehouse/db';
import type {
  AdminStore, AdminTransaction, AuditLogRecord, EmailTemplateRecord, PageOf, PageWindow, WebhookLogRecord, WebhookRecord,
} from '../ports.ts';
import { AuditLogEntity, EmailTemplateEntity, WebhookEntity, WebhookLogEntity } from './schema.ts';

type WebhookRow = typeof WebhookEntity['~entity'];
type LogRow = typeof WebhookLogEntity['~entity'];
type TemplateRow = typeof EmailTemplateEntity['~entity'];
type AuditRow = typeof AuditLogEntity['~entity'];

const toWebhook = (r: WebhookRow): WebhookRecord => ({
  id: r.id, eventName: r.eventName, eventDescription: r.eventDescription, endpoint: r.endpoint, enabled: Boolean(r.enabled),
  // written by this store from a string map
  headers: JSON.parse(r.headers) as Record<string, string>,
  signingSecret: r.signingSecret ?? null, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const webhookRow = (w: WebhookRecord) => ({ ...w, headers: JSON.stringify(w.headers) });
const toLog = (r: LogRow): WebhookLogRecord => ({
  id: r.id, webhookId: r.webhookId, deliveryId: r.deliveryId, attempt: Number(r.attempt), httpStatus: Number(r.httpStatus),
  request: r.request, response: r.response, createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toTemplate = (r: TemplateRow): EmailTemplateRecord => ({
  id: r.id, eventName: r.eventName, subject: r.subject, template: r.template, design: r.design,
  createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toAudit = (r: AuditRow): AuditLogRecord => ({
  id: r.id, actorId: r.actorId ?? null, actorType: r.actorType, actorEmail: r.actorEmail ?? null, action: r.action,
  resourceType: r.resourceType ?? null, resourceId: r.resourceId ?? null, ipAddress: r.ipAddress, userAgent: r.userAgent,
  metadata: r.metadata, createdAt: Number(r.createdAt),
});

const NEWEST_FIRST = { createdAt: 'desc', id: 'desc' } as const;

async function page<R extends object, T>(
  em: EntityManager, entity: any, where: object, window: PageWindow, map: (r: R) => T,
): Promise<PageOf<T>> {
  const [rows, total] = await em.findAndCount(entity, where as never, { orderBy: NEWEST_FIRST as never, offset: window.offset, limit: window.limit });
  return { rows: (rows as R[]).map(map), total };
}

/** Inserts one row unless its primary key exists: false when it did (idempotent consumers). */
async function insertOnce(db: Database, entity: any, row: object): Promise<boolean> {
  try {
    await db.fork().insert(entity, row);
    return true;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return false;
    throw err;
  }
}

/**
 * Builds the store on a database opened with `adminSchema`.
 * @param clock Unix seconds, stamped on outbox envelopes
 */
export function createMikroAdminStore(db: Database, clock: () => number = () => Math.floor(Date.now() / 1000)): AdminStore {
  const inTransaction = <T>(fn: (em: EntityManager) => Promise<T>): Promise<T> =>
    db.transactional(fn, { isolationLevel: IsolationLevel.READ_COMMITTED });
  return {
    webhooks: {
      async get(id) {
        const r = await db.fork().findOne(WebhookEntity, { id });
        return r ? toWebhook(r) : null;
      },
      list: (w) => page<WebhookRow, WebhookRecord>(db.fork(), WebhookEntity, {}, w, toWebhook),
      async enabledFor(eventName) {
        const rows = await db.fork().find(WebhookEntity, { eventName, enabled: true }, { orderBy: { createdAt: 'asc', id: 'asc' } });
        return rows.map(toWebhook);
      },
    },
    webhookLogs: {
      insert: (log) => insertOnce(db, WebhookLogEntity, log),
      list: (w, webhookId) => page<LogRow, WebhookLogRecord>(db.fork(), WebhookLogEntity, webhookId === null ? {} : { webhookId }, w, toLog),
    },
    emailTemplates: {
      async get(id) {
        const r = await db.fork().findOne(EmailTemplateEntity, { id });
        return r ? toTemplate(r) : null;
      },
      async findByEvent(eventName) {
        const r = await db.fork().findOne(EmailTemplateEntity, { eventName });
        return r ? toTemplate(r) : null;
      },
      list: (w) => page<TemplateRow, EmailTemplateRecord>(db.fork(), EmailTemplateEntity, {}, w, toTemplate),
    },
    auditLogs: {
      insert: (row) => insertOnce(db, AuditLogEntity, row),
      list(f, w) {
        const where: Record<string, unknown> = {};
        if (f.action != null) where['action'] = f.action;
        if (f.actorId != null) where['actorId'] = f.actorId;
        if (f.resourceType != null) where['resourceType'] = f.resourceType;
        if (f.resourceId != null) where['resourceId'] = f.resourceId;
        const range: Record<string, number> = {};
        if (f.fromTimestamp != null) range['$gte'] = f.fromTimestamp;
        if (f.toTimestamp != null) range['$lte'] = f.toTimestamp;
        if (Object.keys(range).length > 0) where['createdAt'] = range;
        return page<AuditRow, AuditLogRecord>(db.fork(), AuditLogEntity, where, w, toAudit);
      },
    },
    transaction(fn) {
      return inTransaction(async (em) => {
        const tx: AdminTransaction = {
          webhooks: {
            async insert(w) {
              await em.insert(WebhookEntity, webhookRow(w));
            },
            async update(w) {
              const { id, ...rest } = webhookRow(w);
              return (await em.nativeUpdate(WebhookEntity, { id }, rest)) === 1;
            },
            async delete(id) {
              await em.nativeDelete(WebhookLogEntity, { webhookId: id });
              return (await em.nativeDelete(WebhookEntity, { id })) === 1;
            },
          },
          emailTemplates: {
            async insert(t) {
              if (await em.findOne(EmailTemplateEntity, { eventName: t.eventName })) return false;
              try {
                await em.insert(EmailTemplateEntity, t);
              } catch (err) {
                // a concurrent add for the same event won the unique index
                if (err instanceof UniqueConstraintViolationException) return false;
                throw err;
              }
              return true;
            },
            async update(t) {
              const other = await em.findOne(EmailTemplateEntity, { eventName: t.eventName, id: { $ne: t.id } });
              if (other) return 'conflict';
              const { id, ...rest } = t;
              try {
                return (await em.nativeUpdate(EmailTemplateEntity, { id }, rest)) === 1 ? 'updated' : 'missing';
              } catch (err) {
                if (err instanceof UniqueConstraintViolationException) return 'conflict';
                throw err;
              }
            },
            async delete(id) {
              return (await em.nativeDelete(EmailTemplateEntity, { id })) === 1;
            },
          },
          events: {
            emit(name, data) {
              db.outbox.enqueue(em, { ...newEnvelope(name, 'admin', data), occurredAt: clock() });
            },
          },
        };
        return fn(tx);
      });
    },
  };
}
