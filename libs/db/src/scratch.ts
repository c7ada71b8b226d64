/**
 * @module @gatehouse/db/scratch
 * Throwaway databases for tests: a fresh randomly named database on the machine's PostgreSQL or
 * MariaDB (or a temp SQLite file), dropped afterwards (TOOLCHAIN "Services in tests").
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/core';
import { AppError } from '@gatehouse/errors';
import { buildOrmOptions } from './orm-options.ts';
import type { Envelope } from '@gatehouse/bus';
import { createLogger } from '@gatehouse/observability';
import { openDatabase } from './open.ts';
import type { Database, DatabaseOptions, DatabaseType, ServiceSchema } from './types.ts';

export interface ScratchDatabase {
  readonly options: DatabaseOptions;
  drop(): Promise<void>;
}

/** Default admin connection URLs of the machine's servers. */
export const SCRATCH_ADMIN_URLS: Readonly<Record<'postgres' | 'mysql' | 'mariadb', string>> = {
  postgres: 'postgres://postgres@127.0.0.1:5432/test',
  mysql: 'mysql://root@127.0.0.1:3306/test',
  mariadb: 'mysql://root@127.0.0.1:3306/test',
};

async function adminExec(type: 'postgres' | 'mysql' | 'mariadb', adminUrl: string, sql: string): Promise<void> {
  const base = await buildOrmOptions({ type, url: adminUrl });
  const orm = await MikroORM.init({ ...base, entities: [], discovery: { warnWhenNoEntities: false } });
  try {
    await orm.connect();
    await orm.em.getConnection().execute(sql, [], 'run');
  } finally {
    await orm.close(true);
  }
}

/**
 * Like {@link createScratchDatabase} for PostgreSQL/MySQL/MariaDB, without creating it: options
 * naming a `gh_<random>` database that does not exist yet (for `--database-create` tests), and a
 * `drop()` that removes it if something created it.
 */
export function reserveScratchDatabase(type: 'postgres' | 'mysql' | 'mariadb', adminUrl?: string): ScratchDatabase {
  const name = `gh_${randomBytes(6).toString('hex')}`;
  const admin = adminUrl ?? SCRATCH_ADMIN_URLS[type];
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    options: { type, url: url.toString() },
    drop: () => adminExec(type, admin, type === 'postgres' ? `drop database if exists ${name} with (force)` : `drop database if exists ${name}`),
  };
}

/**
 * Creates `gh_<random>` on the server of `type` (or a temp SQLite file) and returns options that
 * point at it; `drop()` removes it.
 * @throws AppError `invalid_argument` for mongodb (no server here).
 */
export async function createScratchDatabase(type: DatabaseType, adminUrl?: string): Promise<ScratchDatabase> {
  const name = `gh_${randomBytes(6).toString('hex')}`;
  if (type === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-db-'));
    return { options: { type, url: join(dir, `${name}.db`) }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (type === 'mongodb') throw new AppError('invalid_argument', 'no scratch MongoDB available');
  const admin = adminUrl ?? SCRATCH_ADMIN_URLS[type];
  await adminExec(type, admin, `create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    options: { type, url: url.toString() },
    drop: () => adminExec(type, admin, type === 'postgres' ? `drop database if exists ${name} with (force)` : `drop database if exists ${name}`),
  };
}

/** A service's schema migrated on a throwaway database, for storage conformance suites. */
export interface ScratchService {
  readonly db: Database;
  /** the service's outbox rows in `seq` order, as envelopes */
  outbox(): Promise<Envelope[]>;
  /** closes the database and drops it */
  close(): Promise<void>;
}

interface OutboxRow { id: string; name: string; source: string; occurred_at: number | string; data: string }

/**
 * Creates a fresh database of `type` and applies `schema`'s migrations (its outbox first).
 * @throws AppError `invalid_argument` for mongodb (no scratch server here); the migration's errors
 */
export async function openScratchService(type: DatabaseType, schema: ServiceSchema): Promise<ScratchService> {
  const scratch = await createScratchDatabase(type);
  const db = await openDatabase(scratch.options, schema, { logger: createLogger('silent') });
  return {
    db,
    async outbox() {
      const rows = await db.execute<OutboxRow>(`select id, name, source, occurred_at, data from ${db.outbox.table} order by seq`);
      return rows.map((r): Envelope => ({ id: r.id, name: r.name, source: r.source, occurredAt: Number(r.occurred_at), data: JSON.parse(r.data) as unknown }));
    },
    async close() {
      await db.close();
      await scratch.drop();
    },
  };
}
