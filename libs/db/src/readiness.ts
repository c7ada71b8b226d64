/**
 * @module @gatehouse/db/readiness
 * A service database as one `/readyz` dependency (issue 15): a trivial query through the service's
 * own pool, so a probe sees what a request would.
 */
import type { DependencyCheck } from '@gatehouse/observability';
import type { Database, DatabaseOptions } from './types.ts';

/** Where the database is, without credentials: the SQLite file, or `host:port/name`. */
export function databaseTarget(options: DatabaseOptions): string {
  if (options.type === 'sqlite') return options.url ?? options.name ?? ':memory:';
  try {
    if (options.url) {
      const u = new URL(options.url);
      return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
    }
  } catch {
    return options.type;
  }
  return `${options.host ?? 'localhost'}${options.port ? `:${options.port}` : ''}/${options.name ?? ''}`;
}

/** The `database` readiness check of `db`: `SELECT 1` (MongoDB: the driver's connection check). */
export function databaseReadiness(db: Database, options: DatabaseOptions): DependencyCheck {
  return {
    name: 'database',
    target: databaseTarget(options),
    check: async () => {
      if (db.type !== 'mongodb') {
        await db.execute('select 1');
        return;
      }
      const r = await db.orm.checkConnection();
      if (!r.ok) throw new Error(r.reason);
    },
  };
}
