/** @module authz/storage/sql/catalog: the OpenFGA API's other stores in SQL (`fga_stores` and the `fga_store_*` tables). */
import type { AuthzStore, StoreCatalog, StoreInfo } from '../ports.ts';
import { createSqlStore, type SqlPort } from './store.ts';

const STORE_DATA_TABLES = ['fga_store_tuples', 'fga_store_models', 'fga_store_changes', 'fga_store_assertions', 'fga_store_revision'];

const infoOf = (r: Record<string, unknown>): StoreInfo => ({ id: String(r.id), name: String(r.name), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) });

/**
 * The catalog over `db` (run fgaSchemaStatements first). `wrap` decorates each store's {@link AuthzStore}
 * (e.g. publishing its writes to the other replicas); `externalVersion` is as createSqlStore's.
 */
export function createSqlCatalog(db: SqlPort, options: { externalVersion?: (() => number) | null; wrap?: (store: AuthzStore) => AuthzStore } = {}): StoreCatalog {
  const q = (port: SqlPort, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> => {
    if (port.dialect !== 'postgres') return port.execute(sql, params);
    let n = 0;
    return port.execute(sql.replace(/\?/g, () => `$${++n}`), params);
  };
  return {
    async create({ id, name }) {
      const now = Date.now();
      await db.transaction(async (tx) => {
        await q(tx, 'INSERT INTO fga_stores (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)', [id, name, now, now]);
        await q(tx, 'INSERT INTO fga_store_revision (store_id, revision) VALUES (?, 0)', [id]);
      });
      return { id, name, createdAt: now, updatedAt: now };
    },
    async get(id) {
      const r = (await q(db, 'SELECT id, name, created_at, updated_at FROM fga_stores WHERE id = ?', [id]))[0];
      return r ? infoOf(r) : null;
    },
    async list({ name, afterId, limit: asked }) {
      const limit = Math.max(1, Math.floor(asked));
      const where: string[] = [];
      const params: unknown[] = [];
      if (name !== undefined) {
        where.push('name = ?');
        params.push(name);
      }
      if (afterId !== null) {
        where.push('id > ?');
        params.push(afterId);
      }
      const cond = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
      const rows = await q(db, `SELECT id, name, created_at, updated_at FROM fga_stores${cond} ORDER BY id LIMIT ${limit}`, params);
      return rows.map(infoOf);
    },
    async rename(id, name) {
      const now = Date.now();
      await q(db, 'UPDATE fga_stores SET name = ?, updated_at = ? WHERE id = ?', [name, now, id]);
      const r = (await q(db, 'SELECT id, name, created_at, updated_at FROM fga_stores WHERE id = ?', [id]))[0];
      return r ? infoOf(r) : null;
    },
    async delete(id) {
      return db.transaction(async (tx) => {
        if ((await q(tx, 'SELECT id FROM fga_stores WHERE id = ?', [id])).length === 0) return false;
        for (const table of STORE_DATA_TABLES) await q(tx, `DELETE FROM ${table} WHERE store_id = ?`, [id]);
        await q(tx, 'DELETE FROM fga_stores WHERE id = ?', [id]);
        return true;
      });
    },
    open(id) {
      const store = createSqlStore(db, { storeId: id, externalVersion: options.externalVersion ?? null });
      return options.wrap ? options.wrap(store) : store;
    },
  };
}
