/**
 * @module @gatehouse/admin/storage/memory
 * {@link AdminStore} in memory: the fake of unit tests (STYLE §8), passing the same conformance suite.
 * A transaction works on copies and swaps them in only when `fn` resolves, so a throw writes nothing.
 */
import { newEnvelope, type Envelope } from '@gatehouse/bus';
import type {
  AdminStore, AdminTransaction, AuditLogRecord, EmailTemplateRecord, PageOf, PageWindow, WebhookLogRecord, WebhookRecord,
} from './ports.ts';

/** The memory store plus what it has "committed" to its outbox, in order. */
export interface MemoryAdminStore extends AdminStore {
  readonly published: Envelope[];
}

const newestFirst = <T extends { createdAt: number; id: string }>(a: T, b: T): number =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

function pageOf<T extends { createdAt: number; id: string }>(rows: T[], page: PageWindow): PageOf<T> {
  const sorted = [...rows].sort(newestFirst);
  return { rows: sorted.slice(page.offset, page.offset + page.limit).map((r) => structuredClone(r)), total: sorted.length };
}

/** Builds an empty memory store. @param clock Unix seconds, stamped on outbox envelopes */
export function createMemoryAdminStore(clock: () => number = () => Math.floor(Date.now() / 1000)): MemoryAdminStore {
  let webhooks = new Map<string, WebhookRecord>();
  let logs = new Map<string, WebhookLogRecord>();
  let templates = new Map<string, EmailTemplateRecord>();
  const audit = new Map<string, AuditLogRecord>();
  const published: Envelope[] = [];
  let chain: Promise<unknown> = Promise.resolve();

  return {
    published,
    webhooks: {
      async get(id) {
        const w = webhooks.get(id);
        return w ? structuredClone(w) : null;
      },
      async list(page) {
        return pageOf([...webhooks.values()], page);
      },
      async enabledFor(eventName) {
        return [...webhooks.values()].filter((w) => w.enabled && w.eventName === eventName).map((w) => structuredClone(w));
      },
    },
    webhookLogs: {
      async insert(log) {
        if (logs.has(log.id)) return false;
        logs.set(log.id, structuredClone(log));
        return true;
      },
      async list(page, webhookId) {
        return pageOf([...logs.values()].filter((l) => webhookId === null || l.webhookId === webhookId), page);
      },
    },
    emailTemplates: {
      async get(id) {
        const t = templates.get(id);
        return t ? structuredClone(t) : null;
      },
      async findByEvent(eventName) {
        const t = [...templates.values()].find((x) => x.eventName === eventName);
        return t ? structuredClone(t) : null;
      },
      async list(page) {
        return pageOf([...templates.values()], page);
      },
    },
    auditLogs: {
      async insert(row) {
        if (audit.has(row.id)) return false;
        audit.set(row.id, structuredClone(row));
        return true;
      },
      async list(f, page) {
        const rows = [...audit.values()].filter((r) =>
          (f.action == null || r.action === f.action) &&
          (f.actorId == null || r.actorId === f.actorId) &&
          (f.resourceType == null || r.resourceType === f.resourceType) &&
          (f.resourceId == null || r.resourceId === f.resourceId) &&
          (f.fromTimestamp == null || r.createdAt >= f.fromTimestamp) &&
          (f.toTimestamp == null || r.createdAt <= f.toTimestamp));
        return pageOf(rows, page);
      },
    },
    transaction<T>(fn: (tx: AdminTransaction) => Promise<T>): Promise<T> {
      const run = async (): Promise<T> => {
        const w = new Map(webhooks);
        const l = new Map(logs);
        const t = new Map(templates);
        const out: Envelope[] = [];
        const tx: AdminTransaction = {
          webhooks: {
            async insert(rec) { w.set(rec.id, structuredClone(rec)); },
            async update(rec) {
              if (!w.has(rec.id)) return false;
              w.set(rec.id, structuredClone(rec));
              return true;
            },
            async delete(id) {
              if (!w.delete(id)) return false;
              for (const [k, v] of l) if (v.webhookId === id) l.delete(k);
              return true;
            },
          },
          emailTemplates: {
            async insert(rec) {
              if ([...t.values()].some((x) => x.eventName === rec.eventName)) return false;
              t.set(rec.id, structuredClone(rec));
              return true;
            },
            async update(rec) {
              if (!t.has(rec.id)) return 'missing';
              if ([...t.values()].some((x) => x.eventName === rec.eventName && x.id !== rec.id)) return 'conflict';
              t.set(rec.id, structuredClone(rec));
              return 'updated';
            },
            async delete(id) { return t.delete(id); },
          },
          events: { emit(name, data) { out.push({ ...newEnvelope(name, 'admin', data), occurredAt: clock() }); } },
        };
        const result = await fn(tx);
        webhooks = w;
        logs = l;
        templates = t;
        published.push(...out);
        return result;
      };
      const next = chain.then(run, run);
      chain = next.catch(() => undefined);
      return next;
    },
  };
}
