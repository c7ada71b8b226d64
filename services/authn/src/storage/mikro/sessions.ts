/**
 * @module @gatehouse/authn/storage/mikro/sessions
 * SessionStore on the `authn_sessions` table (used when `--redis-url` is unset, behaviour.md §1.3).
 * Expired rows read as absent; a user's expired rows are pruned when they open a new session.
 * `get` and `findByHandleHash` (every cache miss of credential resolution) are prepared statements
 * on SQL databases (`db.prepare`), the ORM on MongoDB.
 */
import type { EntityManager } from '@mikro-orm/core';
import { selectColumns, type Database } from '@gatehouse/db';
import type { SessionRecord, SessionStore } from '@gatehouse/auth';
import { SessionEntity } from './entities.ts';

type Row = Record<string, unknown>;

const toRecord = (r: Row): SessionRecord => ({
  id: String(r.id),
  userId: String(r.userId),
  handleHash: String(r.handleHash),
  loginMethod: String(r.loginMethod),
  roles: JSON.parse(String(r.roles)) as string[],
  scope: JSON.parse(String(r.scope)) as string[],
  authTime: Number(r.authTime),
  expiresAt: Number(r.expiresAt),
  refreshTokenId: (r.refreshTokenId as string | null) ?? null,
  createdAt: Number(r.createdAt),
  ...(r.amr ? { amr: JSON.parse(String(r.amr)) as string[] } : {}),
  ...(r.previousRefreshTokenId ? { previousRefreshTokenId: String(r.previousRefreshTokenId), refreshRotatedAt: Number(r.refreshRotatedAt) } : {}),
  ...(r.clientId ? { clientId: String(r.clientId) } : {}),
  ...(r.sid ? { sid: String(r.sid) } : {}),
  ...(r.userAgent ? { userAgent: String(r.userAgent) } : {}),
  ...(r.ipAddress ? { ipAddress: String(r.ipAddress) } : {}),
  ...(r.lastUsedAt ? { lastUsedAt: Number(r.lastUsedAt) } : {}),
});

const toRow = (s: SessionRecord): Row => ({
  ...s, refreshTokenId: s.refreshTokenId ?? null, roles: JSON.stringify(s.roles), scope: JSON.stringify(s.scope),
  amr: s.amr && s.amr.length > 0 ? JSON.stringify(s.amr) : null,
  previousRefreshTokenId: s.previousRefreshTokenId ?? null, refreshRotatedAt: s.refreshRotatedAt ?? null, clientId: s.clientId ?? null,
  sid: s.sid ?? null,
  userAgent: s.userAgent ?? null, ipAddress: s.ipAddress ?? null, lastUsedAt: s.lastUsedAt ?? null,
});

export function createMikroSessionStore(db: Database, options: { clock?: () => number } = {}): SessionStore {
  const clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  const em = (): EntityManager => db.fork();
  const live = async (where: Row): Promise<SessionRecord | null> => {
    const row = await em().findOne(SessionEntity as never, { ...where, expiresAt: { $gt: clock() } } as never, { disableIdentityMap: true } as never);
    return row ? toRecord(row as Row) : null;
  };
  // the credential hot path on SQL databases: one prepared statement each (issue 22 §1), same rows
  const prepared = (column: string): ((value: string) => Promise<SessionRecord | null>) | null => {
    if (!db.prepare) return null;
    const read = db.prepare(`select ${selectColumns(db.type, db.orm, SessionEntity as never)} from authn_sessions where ${column} = ? and expires_at > ?`);
    return async (value) => {
      const [row] = await read<Row>([value, clock()]);
      return row ? toRecord(row) : null;
    };
  };
  const byId = prepared('id') ?? ((id: string) => live({ id }));
  const byHandleHash = prepared('handle_hash') ?? ((handleHash: string) => live({ handleHash }));
  return {
    async create(s) {
      await db.transactional(async (tx) => {
        await tx.nativeDelete(SessionEntity as never, { userId: s.userId, expiresAt: { $lte: clock() } } as never);
        tx.persist(tx.create(SessionEntity as never, toRow(s) as never));
      });
    },
    get: byId,
    findByHandleHash: byHandleHash,
    async delete(id) {
      await em().nativeDelete(SessionEntity as never, { id } as never);
    },
    async deleteAllForUser(userId, exceptId) {
      const where: Row = exceptId === undefined ? { userId } : { userId, id: { $ne: exceptId } };
      const all = await em().nativeDelete(SessionEntity as never, where as never);
      return all;
    },
    async deleteAllForClient(clientId, userId) {
      return em().nativeDelete(SessionEntity as never, (userId === undefined ? { clientId } : { clientId, userId }) as never);
    },
    async update(s) {
      // issue 33: the last use is `touch`'s alone, so a rewrite from an older read does not set it back
      const { id, lastUsedAt: _lastUsedAt, ...rest } = toRow(s);
      await em().nativeUpdate(SessionEntity as never, { id } as never, rest as never);
    },
    async listForUser(userId) {
      const rows = await em().find(SessionEntity as never, { userId, expiresAt: { $gt: clock() } } as never, { disableIdentityMap: true } as never);
      return (rows as Row[]).map(toRecord);
    },
    async touch(s, at) {
      await em().nativeUpdate(SessionEntity as never, { id: s.id } as never, { lastUsedAt: at } as never);
    },
  };
}
