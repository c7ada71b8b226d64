/**
 * @module @gatehouse/db/migrate
 * Runs a service's migrations once each, recorded in `<service>_migrations`, under a per-service
 * lock so two processes starting at once apply nothing twice:
 * PostgreSQL `pg_advisory_xact_lock`, MySQL/MariaDB `GET_LOCK`, SQLite the database write lock
 * (the first statement of the transaction is a write, so a second process waits on busy_timeout).
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';
import { createDdl, quoteIdentifier } from './ddl.ts';
import type { ClassMigration, DatabaseType, MigrationContext, MigrationDefinition } from './types.ts';

/** seconds a MySQL/MariaDB process waits for another's migration run */
const MYSQL_LOCK_TIMEOUT_S = 120;

type Exec = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Runs `sql` on the transaction held by `em` (its connection), `?` placeholders. */
export function execOn(em: EntityManager): Exec {
  return async (sql, params = []) => {
    const conn = em.getConnection() as unknown as {
      execute(sql: string, params: unknown[], method: 'all' | 'run', ctx?: unknown): Promise<unknown>;
    };
    const res = await conn.execute(sql, params, 'all', em.getTransactionContext());
    return Array.isArray(res) ? (res as Record<string, unknown>[]) : [];
  };
}

/** A signed 63-bit key for pg_advisory_xact_lock, stable per name. */
function advisoryKey(name: string): string {
  return BigInt.asIntN(64, createHash('sha256').update(name).digest().readBigUInt64BE(0)).toString();
}

/**
 * Applies the pending migrations of `service` in order; returns the names applied now.
 * @throws AppError `internal` when a migration fails (the cause is kept) or two migrations share a name.
 */
export async function runMigrations(
  em: EntityManager,
  type: Exclude<DatabaseType, 'mongodb'>,
  service: string,
  migrations: MigrationDefinition[],
  logger: Logger,
): Promise<string[]> {
  const names = new Set<string>();
  for (const m of migrations) {
    if (names.has(m.name)) throw new AppError('internal', `duplicate migration name ${m.name} in ${service}`);
    names.add(m.name);
  }
  const table = `${service}_migrations`;
  const q = (n: string): string => quoteIdentifier(type, n);
  const lockName = `gatehouse_migrations_${service}`;
  const createTable = `create table if not exists ${q(table)} (${q('name')} varchar(255) not null primary key, ${q('executed_at')} bigint not null)`;

  if (type === 'sqlite') {
    // auto-commit and idempotent; the write below then takes the write lock first thing
    const exec = execOn(em);
    await exec(createTable);
  }
  return em.transactional(async (tem) => {
    const exec = execOn(tem);
    if (type === 'postgres') {
      await exec('select pg_advisory_xact_lock(?)', [advisoryKey(lockName)]);
      await exec(createTable);
    } else if (type === 'mysql' || type === 'mariadb') {
      const rows = await exec('select get_lock(?, ?) as ok', [lockName, MYSQL_LOCK_TIMEOUT_S]);
      if (Number(rows[0]?.ok) !== 1) throw new AppError('unavailable', `timed out waiting for the ${service} migration lock`);
      await exec(createTable);
    } else {
      await exec(`delete from ${q(table)} where ${q('name')} = ?`, ['(lock)']);
    }
    const applied: string[] = [];
    try {
      const done = new Set((await exec(`select ${q('name')} as name from ${q(table)}`)).map((r) => String(r.name)));
      const ctx: MigrationContext = { type, execute: exec as MigrationContext['execute'], ddl: createDdl(type, exec) };
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        try {
          if ('migration' in m) {
            const driver = tem.getDriver() as unknown as ConstructorParameters<ClassMigration['migration']>[0];
            const instance = new m.migration(driver, tem.config);
            instance.setTransactionContext(tem.getTransactionContext()!);
            await instance.up();
            for (const query of instance.getQueries()) await instance.execute(query);
          } else {
            await m.up(ctx);
          }
        } catch (cause) {
          throw new AppError('internal', `migration ${service}/${m.name} failed`, { cause });
        }
        await exec(`insert into ${q(table)} (${q('name')}, ${q('executed_at')}) values (?, ?)`, [m.name, Date.now()]);
        applied.push(m.name);
        logger.info({ migration: m.name }, 'migration applied');
      }
    } finally {
      if (type === 'mysql' || type === 'mariadb') await exec('select release_lock(?) as ok', [lockName]);
    }
    return applied;
  });
}
