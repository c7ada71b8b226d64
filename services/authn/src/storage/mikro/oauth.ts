/**
 * @module @gatehouse/authn/storage/mikro/oauth
 * OAuthStore on `authn_oauth_clients`, `authn_trusted_issuers`, `authn_authorization_codes`,
 * `authn_used_jtis` (issue 18), `authn_consent_grants`, `authn_consent_requests` and `authn_device_authorizations` (issue 34). Lists are JSON text, as in the other authn tables.
 */
import type { Database } from '@gatehouse/db';
import type { AuthorizationCodeRecord, ClientRecord, ConsentGrantRecord, ConsentRequestRecord, DeviceAuthorizationRecord, DeviceAuthorizationStatus, OAuthStore, SessionClientRecord, TrustedIssuerRecord } from '../ports.ts';
import { AuthorizationCodeEntity, ConsentGrantEntity, ConsentRequestEntity, DeviceAuthorizationEntity, OAuthClientEntity, SessionClientEntity, TrustedIssuerEntity, UsedJtiEntity } from './entities.ts';
import { CODE_GRACE_SECONDS } from './retention.ts';

type Row = Record<string, unknown>;
const ORDER = { orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] };
const list = (v: unknown): string[] => JSON.parse(String(v ?? '[]')) as string[];
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toClient = (r: Row): ClientRecord => ({
  id: String(r.id), name: String(r.name), description: strOrNull(r.description), allowedScopes: list(r.allowedScopes),
  isActive: Boolean(r.isActive), secretHash: strOrNull(r.secretHash), redirectUris: list(r.redirectUris), grantTypes: list(r.grantTypes),
  isPublic: Boolean(r.isPublic), postLogoutRedirectUris: list(r.postLogoutRedirectUris), isFirstParty: Boolean(r.isFirstParty),
  registrationTokenHash: strOrNull(r.registrationTokenHash), registeredIp: strOrNull(r.registeredIp), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
  backchannelLogoutUri: strOrNull(r.backchannelLogoutUri), backchannelLogoutSessionRequired: Boolean(r.backchannelLogoutSessionRequired),
  frontchannelLogoutUri: strOrNull(r.frontchannelLogoutUri), frontchannelLogoutSessionRequired: Boolean(r.frontchannelLogoutSessionRequired),
  requirePushedAuthorizationRequests: Boolean(r.requirePushedAuthorizationRequests),
});
const clientRow = (c: ClientRecord): Row => ({
  ...c, allowedScopes: JSON.stringify(c.allowedScopes), redirectUris: JSON.stringify(c.redirectUris), grantTypes: JSON.stringify(c.grantTypes),
  postLogoutRedirectUris: JSON.stringify(c.postLogoutRedirectUris),
  backchannelLogoutUri: c.backchannelLogoutUri ?? null, backchannelLogoutSessionRequired: c.backchannelLogoutSessionRequired === true,
  frontchannelLogoutUri: c.frontchannelLogoutUri ?? null, frontchannelLogoutSessionRequired: c.frontchannelLogoutSessionRequired === true,
  requirePushedAuthorizationRequests: c.requirePushedAuthorizationRequests === true,
});
const toIssuer = (r: Row): TrustedIssuerRecord => ({
  id: String(r.id), serviceAccountId: String(r.serviceAccountId), name: String(r.name), issuerUrl: String(r.issuerUrl),
  keySourceType: String(r.keySourceType), jwksUrl: strOrNull(r.jwksUrl), expectedAud: String(r.expectedAud), subjectClaim: String(r.subjectClaim),
  allowedSubjects: strOrNull(r.allowedSubjects), issuerType: String(r.issuerType), isActive: Boolean(r.isActive),
  spiffeRefreshHintSeconds: numOrNull(r.spiffeRefreshHintSeconds), enableTokenReview: Boolean(r.enableTokenReview),
  kubernetesApiServerUrl: strOrNull(r.kubernetesApiServerUrl), createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toCode = (r: Row): AuthorizationCodeRecord => ({
  codeHash: String(r.codeHash), clientId: String(r.clientId), redirectUri: String(r.redirectUri), codeChallenge: strOrNull(r.codeChallenge),
  userId: String(r.userId), sessionId: String(r.sessionId), grant: String(r.grant), expiresAt: Number(r.expiresAt),
  consumedAt: numOrNull(r.consumedAt), issuedSessionId: strOrNull(r.issuedSessionId),
});
const toGrant = (r: Row): ConsentGrantRecord => ({
  id: String(r.id), userId: String(r.userId), clientId: String(r.clientId), scope: String(r.scope).split(' ').filter(Boolean),
  createdAt: Number(r.createdAt), updatedAt: Number(r.updatedAt),
});
const toConsentRequest = (r: Row): ConsentRequestRecord => ({
  ticketHash: String(r.ticketHash), sessionId: String(r.sessionId), userId: String(r.userId), clientId: String(r.clientId),
  params: String(r.params), expiresAt: Number(r.expiresAt), consumedAt: numOrNull(r.consumedAt),
});

const toDevice = (r: Row): DeviceAuthorizationRecord => ({
  deviceCodeHash: String(r.deviceCodeHash), userCodeHash: String(r.userCodeHash), clientId: String(r.clientId), scope: String(r.scope).split(' ').filter(Boolean),
  status: String(r.status) as DeviceAuthorizationStatus, userId: strOrNull(r.userId), grant: strOrNull(r.grant), interval: Number(r.interval),
  lastPolledAt: numOrNull(r.lastPolledAt), expiresAt: Number(r.expiresAt), consumedAt: numOrNull(r.consumedAt),
});

/**
 * The shape of a client's or trusted issuer's id. Their columns are PostgreSQL `uuid`s, which refuse
 * any other text with an error (a 500 for `/authorize?client_id=x`): an id of another shape names no
 * row, so the finders answer null and the deletes false without asking the database.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Builds the OAuthStore on a Database opened with authn's schema. */
export function createMikroOAuthStore(db: Database): OAuthStore {
  const em = () => db.fork();
  const one = async <T>(entity: unknown, where: Row, map: (r: Row) => T): Promise<T | null> => {
    const row = await em().findOne(entity as never, where as never, { disableIdentityMap: true } as never);
    return row ? map(row as Row) : null;
  };
  const insert = async (entity: unknown, row: Row): Promise<void> => {
    const e = em();
    e.persist(e.create(entity as never, row as never));
    await e.flush();
  };
  const replace = async (entity: unknown, id: string, row: Row): Promise<void> => {
    const { id: _id, ...rest } = row;
    await em().nativeUpdate(entity as never, { id } as never, rest as never);
  };
  return {
    createClient: (c) => insert(OAuthClientEntity, clientRow(c)),
    updateClient: (c) => replace(OAuthClientEntity, c.id, clientRow(c)),
    async deleteClient(id) {
      if (!UUID.test(id)) return false;
      return db.transactional(async (tx) => {
        await tx.nativeDelete(TrustedIssuerEntity as never, { serviceAccountId: id } as never);
        await tx.nativeDelete(ConsentGrantEntity as never, { clientId: id } as never);
        return (await tx.nativeDelete(OAuthClientEntity as never, { id } as never)) > 0;
      });
    },
    findClient: async (id) => (UUID.test(id) ? one(OAuthClientEntity, { id }, toClient) : null),
    async countRegisteredClients(since, ip) {
      const where: Row = { registrationTokenHash: { $ne: null } };
      if (since !== null) where.createdAt = { $gte: since };
      if (ip !== null) where.registeredIp = ip;
      return em().count(OAuthClientEntity as never, where as never);
    },
    async listClients(page) {
      const [rows, total] = await em().findAndCount(OAuthClientEntity as never, {} as never, { ...ORDER, offset: page.offset, limit: page.limit } as never);
      return { rows: (rows as Row[]).map(toClient), total };
    },
    createIssuer: (t) => insert(TrustedIssuerEntity, { ...t }),
    updateIssuer: (t) => replace(TrustedIssuerEntity, t.id, { ...t }),
    async deleteIssuer(id) {
      if (!UUID.test(id)) return false;
      return (await em().nativeDelete(TrustedIssuerEntity as never, { id } as never)) > 0;
    },
    findIssuer: async (id) => (UUID.test(id) ? one(TrustedIssuerEntity, { id }, toIssuer) : null),
    findIssuerByUrl: (issuerUrl) => one(TrustedIssuerEntity, { issuerUrl }, toIssuer),
    async listIssuers(serviceAccountId, page) {
      const where = serviceAccountId ? { serviceAccountId } : {};
      const [rows, total] = await em().findAndCount(TrustedIssuerEntity as never, where as never, { ...ORDER, offset: page.offset, limit: page.limit } as never);
      return { rows: (rows as Row[]).map(toIssuer), total };
    },
    async saveCode(c) {
      await em().nativeDelete(AuthorizationCodeEntity as never, { expiresAt: { $lt: c.expiresAt - CODE_GRACE_SECONDS } } as never);
      await insert(AuthorizationCodeEntity, { ...c });
    },
    findCode: (codeHash) => one(AuthorizationCodeEntity, { codeHash }, toCode),
    async consumeCode(codeHash, at) {
      return (await em().nativeUpdate(AuthorizationCodeEntity as never, { codeHash, consumedAt: null } as never, { consumedAt: at } as never)) === 1;
    },
    async setCodeSession(codeHash, sessionId) {
      await em().nativeUpdate(AuthorizationCodeEntity as never, { codeHash } as never, { issuedSessionId: sessionId } as never);
    },
    async useJti(key, expiresAt, now) {
      await em().nativeDelete(UsedJtiEntity as never, { expiresAt: { $lte: now } } as never);
      try {
        await insert(UsedJtiEntity, { key, expiresAt });
        return true;
      } catch {
        // the primary key already holds it: a replay
        return false;
      }
    },
    async saveConsentGrant(g) {
      // the id is derived from (user, client, scope set): a second save of the same set finds its row
      const updated = await em().nativeUpdate(ConsentGrantEntity as never, { id: g.id } as never, { updatedAt: g.updatedAt } as never);
      if (updated === 0) {
        try {
          await insert(ConsentGrantEntity, { ...g, scope: g.scope.join(' ') });
        } catch {
          // a concurrent save of the same set inserted it first
          await em().nativeUpdate(ConsentGrantEntity as never, { id: g.id } as never, { updatedAt: g.updatedAt } as never);
        }
      }
      return (await one(ConsentGrantEntity, { id: g.id }, toGrant))!;
    },
    async listConsentGrants(userId, clientId, page) {
      const where: Row = {};
      if (userId !== null) where.userId = userId;
      if (clientId !== null) where.clientId = clientId;
      const [rows, total] = await em().findAndCount(ConsentGrantEntity as never, where as never, { ...ORDER, offset: page.offset, limit: page.limit } as never);
      return { rows: (rows as Row[]).map(toGrant), total };
    },
    findConsentGrant: (id) => one(ConsentGrantEntity, { id }, toGrant),
    async deleteConsentGrant(id) {
      return (await em().nativeDelete(ConsentGrantEntity as never, { id } as never)) > 0;
    },
    async saveConsentRequest(r) {
      await em().nativeDelete(ConsentRequestEntity as never, { expiresAt: { $lt: r.expiresAt - 3600 } } as never);
      await insert(ConsentRequestEntity, { ...r });
    },
    async consumeConsentRequest(ticketHash, at) {
      const n = await em().nativeUpdate(ConsentRequestEntity as never, { ticketHash, consumedAt: null, expiresAt: { $gt: at } } as never, { consumedAt: at } as never);
      return n === 1 ? one(ConsentRequestEntity, { ticketHash }, toConsentRequest) : null;
    },
    async saveDeviceAuthorization(r) {
      await em().nativeDelete(DeviceAuthorizationEntity as never, { expiresAt: { $lt: r.expiresAt - 3600 } } as never);
      await insert(DeviceAuthorizationEntity, { ...r, scope: r.scope.join(' ') });
    },
    findDeviceAuthorization: (deviceCodeHash) => one(DeviceAuthorizationEntity, { deviceCodeHash }, toDevice),
    async findDeviceAuthorizationByUserCode(userCodeHash, now) {
      const rows = await em().find(DeviceAuthorizationEntity as never, { userCodeHash, expiresAt: { $gt: now } } as never,
        { orderBy: { expiresAt: 'desc' }, limit: 1, disableIdentityMap: true } as never);
      return rows.length > 0 ? toDevice(rows[0] as Row) : null;
    },
    async answerDeviceAuthorization(deviceCodeHash, answer, at) {
      const n = await em().nativeUpdate(DeviceAuthorizationEntity as never, { deviceCodeHash, status: 'pending', expiresAt: { $gt: at } } as never,
        { status: answer.status, userId: answer.userId, grant: answer.grant } as never);
      return n === 1;
    },
    async recordDevicePoll(deviceCodeHash, seenLastPolledAt, at, interval) {
      const n = await em().nativeUpdate(DeviceAuthorizationEntity as never, { deviceCodeHash, lastPolledAt: seenLastPolledAt } as never,
        { lastPolledAt: at, interval } as never);
      return n === 1;
    },
    async consumeDeviceAuthorization(deviceCodeHash, at) {
      const n = await em().nativeUpdate(DeviceAuthorizationEntity as never, { deviceCodeHash, status: 'approved', consumedAt: null } as never, { consumedAt: at } as never);
      return n === 1;
    },
    async addSessionClient(r) {
      await insert(SessionClientEntity, { ...r });
    },
    async takeSessionClients(by, now) {
      const where = ('sid' in by ? { sid: by.sid } : { userId: by.userId }) as Row;
      const rows = await em().find(SessionClientEntity as never, where as never, { disableIdentityMap: true } as never) as Row[];
      const out: SessionClientRecord[] = [];
      for (const r of rows) {
        // only the call that deleted the row reports it, so two logouts do not both notify
        const n = await em().nativeDelete(SessionClientEntity as never, { sessionId: r.sessionId } as never);
        if (n === 1 && Number(r.expiresAt) > now) out.push({ sessionId: String(r.sessionId), sid: String(r.sid), userId: String(r.userId), clientId: String(r.clientId), expiresAt: Number(r.expiresAt) });
      }
      return out;
    },
  };
}
