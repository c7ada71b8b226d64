/**
 * @module @gatehouse/authn/storage/memory-oauth
 * In-memory OAuthStore (issue 18): the fake of unit tests, with the same rules as the MikroORM one
 * (created_at desc then id; client deletion cascades to its issuers and consent grants; codes, jtis
 * and consent requests single use).
 */
import type { AuthorizationCodeRecord, ClientRecord, ConsentGrantRecord, ConsentRequestRecord, DeviceAuthorizationRecord, OAuthStore, Page, PageRequest, SessionClientRecord, TrustedIssuerRecord } from './ports.ts';

const page = <T extends { createdAt: number; id: string }>(all: T[], p: PageRequest): Page<T> => {
  const sorted = [...all].sort((a, b) => b.createdAt - a.createdAt || a.id.localeCompare(b.id));
  return { rows: sorted.slice(p.offset, p.offset + p.limit).map((r) => structuredClone(r)), total: sorted.length };
};

/** Builds an empty in-memory OAuthStore. */
export function createMemoryOAuthStore(): OAuthStore {
  const clients = new Map<string, ClientRecord>();
  const issuers = new Map<string, TrustedIssuerRecord>();
  const codes = new Map<string, AuthorizationCodeRecord>();
  const jtis = new Map<string, number>();
  const grants = new Map<string, ConsentGrantRecord>();
  const consentRequests = new Map<string, ConsentRequestRecord>();
  const devices = new Map<string, DeviceAuthorizationRecord>();
  const sessionClients = new Map<string, SessionClientRecord>();
  const get = <T>(m: Map<string, T>, k: string): T | null => (m.has(k) ? structuredClone(m.get(k)!) : null);
  return {
    async createClient(c) { clients.set(c.id, structuredClone(c)); },
    async updateClient(c) { clients.set(c.id, structuredClone(c)); },
    async deleteClient(id) {
      for (const [k, t] of issuers) if (t.serviceAccountId === id) issuers.delete(k);
      for (const [k, g] of grants) if (g.clientId === id) grants.delete(k);
      return clients.delete(id);
    },
    findClient: async (id) => get(clients, id),
    listClients: async (p) => page([...clients.values()], p),
    countRegisteredClients: async (since, ip) => [...clients.values()]
      .filter((c) => c.registrationTokenHash !== null && (since === null || c.createdAt >= since) && (ip === null || c.registeredIp === ip)).length,
    async createIssuer(t) { issuers.set(t.id, structuredClone(t)); },
    async updateIssuer(t) { issuers.set(t.id, structuredClone(t)); },
    deleteIssuer: async (id) => issuers.delete(id),
    findIssuer: async (id) => get(issuers, id),
    findIssuerByUrl: async (url) => structuredClone([...issuers.values()].find((t) => t.issuerUrl === url) ?? null),
    listIssuers: async (sa, p) => page([...issuers.values()].filter((t) => sa === null || t.serviceAccountId === sa), p),
    async saveCode(c) { codes.set(c.codeHash, structuredClone(c)); },
    findCode: async (h) => get(codes, h),
    async consumeCode(h, at) {
      const c = codes.get(h);
      if (!c || c.consumedAt !== null) return false;
      c.consumedAt = at;
      return true;
    },
    async setCodeSession(h, sessionId) {
      const c = codes.get(h);
      if (c) c.issuedSessionId = sessionId;
    },
    async useJti(key, expiresAt, now) {
      for (const [k, exp] of jtis) if (exp <= now) jtis.delete(k);
      if (jtis.has(key)) return false;
      jtis.set(key, expiresAt);
      return true;
    },
    async saveConsentGrant(g) {
      const old = grants.get(g.id);
      const row = old ? { ...old, updatedAt: g.updatedAt } : structuredClone(g);
      grants.set(g.id, row);
      return structuredClone(row);
    },
    listConsentGrants: async (userId, clientId, p) =>
      page([...grants.values()].filter((g) => (userId === null || g.userId === userId) && (clientId === null || g.clientId === clientId)), p),
    findConsentGrant: async (id) => get(grants, id),
    deleteConsentGrant: async (id) => grants.delete(id),
    async saveConsentRequest(r) {
      for (const [k, old] of consentRequests) if (old.expiresAt < r.expiresAt - 3600) consentRequests.delete(k);
      consentRequests.set(r.ticketHash, structuredClone(r));
    },
    async consumeConsentRequest(h, at) {
      const r = consentRequests.get(h);
      if (!r || r.consumedAt !== null || r.expiresAt <= at) return null;
      r.consumedAt = at;
      return structuredClone(r);
    },
    async saveDeviceAuthorization(r) {
      for (const [k, old] of devices) if (old.expiresAt < r.expiresAt - 3600) devices.delete(k);
      devices.set(r.deviceCodeHash, structuredClone(r));
    },
    findDeviceAuthorization: async (h) => get(devices, h),
    findDeviceAuthorizationByUserCode: async (h, now) =>
      structuredClone([...devices.values()].find((d) => d.userCodeHash === h && d.expiresAt > now) ?? null),
    async answerDeviceAuthorization(h, answer, at) {
      const d = devices.get(h);
      if (!d || d.status !== 'pending' || d.expiresAt <= at) return false;
      Object.assign(d, answer);
      return true;
    },
    async recordDevicePoll(h, seen, at, interval) {
      const d = devices.get(h);
      if (!d || d.lastPolledAt !== seen) return false;
      d.lastPolledAt = at;
      d.interval = interval;
      return true;
    },
    async consumeDeviceAuthorization(h, at) {
      const d = devices.get(h);
      if (!d || d.status !== 'approved' || d.consumedAt !== null) return false;
      d.consumedAt = at;
      return true;
    },
    async addSessionClient(r) {
      sessionClients.set(r.sessionId, { ...r });
    },
    async takeSessionClients(by, now) {
      const out: SessionClientRecord[] = [];
      for (const [k, r] of sessionClients) {
        if ('sid' in by ? r.sid !== by.sid : r.userId !== by.userId) continue;
        sessionClients.delete(k);
        if (r.expiresAt > now) out.push({ ...r });
      }
      return out;
    },
  };
}
