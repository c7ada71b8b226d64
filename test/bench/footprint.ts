/**
 * @module test/bench/footprint
 * What the footprint and memory benchmarks share: the resident set of a server process read from
 * /proc, and the GitHub-like dataset written straight into a deployment's authz tables (faster than
 * the API; the server loads it on its next start).
 */
import { readFileSync } from 'node:fs';
import { openDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import type { Deployment } from '@gatehouse/testing';
import { createEngine } from '../../services/authz/src/domain/index.ts';
import { createSqlStore } from '../../services/authz/src/storage/sql/store.ts';
import { fgaMigrations, sqlPortOf } from '../../services/authz/src/storage/sql/db-port.ts';
import type { Dataset } from '../../services/authz/bench/github-dataset.ts';

/** Resident set of `pid` in bytes (VmRSS of /proc/<pid>/status). @throws Error when the process has none (gone) */
export function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

/** RSS of `pid` once the process has settled, in bytes: the lowest of 5 readings 1 s apart. */
export async function settledRss(pid: number): Promise<number> {
  let low = Infinity;
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    low = Math.min(low, rssOf(pid));
  }
  return low;
}

/**
 * Writes `data`'s model and tuples (5,000 per write) into the authz tables of `d`'s database, through
 * the engine's own SQL store. A running server sees them only after a restart (its snapshot was loaded).
 */
export async function writeDataset(d: Deployment, data: Dataset): Promise<void> {
  const db = await openDatabase({ type: d.databaseType, url: d.databaseUrl }, { service: 'authz', entities: [], migrations: fgaMigrations }, { logger: createLogger('warn') });
  try {
    const store = createSqlStore(sqlPortOf(db));
    await createEngine({ store }).writeModel(data.model);
    for (let i = 0; i < data.tuples.length; i += 5000) await store.writeTuples(data.tuples.slice(i, i + 5000), []);
  } finally {
    await db.close();
  }
}
