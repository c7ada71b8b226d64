/**
 * @module @gatehouse/db/sqlite-shared
 * One better-sqlite3 connection per SQLite file per process, shared by every service that opens
 * that file (all-in-one mode), behind one async mutex.
 *
 * Why: better-sqlite3 is synchronous. Two connections to one file in one thread deadlock as soon
 * as one holds a write transaction across an `await` and the other waits on `busy_timeout` (the
 * wait blocks the very thread that would commit). Sharing the connection and serialising
 * transactions through an async mutex avoids that; WAL and `busy_timeout` still cover other
 * processes using the same file. `:memory:` databases are private to each open.
 */
import { resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteAdapter, SqliteDialect, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { DatabaseConnection, Dialect, Driver, Kysely, SqliteDatabase, TransactionSettings } from 'kysely';

/** busy_timeout for other processes holding the write lock (ms) */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #release: (() => void)[] = [];
  async lock(): Promise<void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.#tail;
    this.#tail = prev.then(() => next);
    await prev;
    this.#release.push(release);
  }
  unlock(): void {
    this.#release.shift()?.();
  }
}

interface Shared {
  driver: Driver;
  native: BetterSqlite3.Database;
  mutex: Mutex;
  refs: number;
  init?: Promise<void>;
}

const shared = new Map<string, Shared>();
/** the connection each dialect made by {@link sharedSqliteDialect} shares */
const byDialect = new WeakMap<Dialect, Shared>();

/** Opens the file with WAL, a busy timeout and foreign keys on. */
function openNative(path: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(path);
  db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  if (path !== ':memory:') db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  return db;
}

class SharedDriver implements Driver {
  readonly #key: string;
  readonly #s: Shared;
  #released = false;
  constructor(key: string, s: Shared) {
    this.#key = key;
    this.#s = s;
  }
  async init(): Promise<void> {
    this.#s.init ??= this.#s.driver.init();
    await this.#s.init;
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#s.mutex.lock();
    return this.#s.driver.acquireConnection();
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#s.driver.releaseConnection(connection);
    this.#s.mutex.unlock();
  }
  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#s.driver.beginTransaction(c, settings);
  }
  commitTransaction(c: DatabaseConnection): Promise<void> {
    return this.#s.driver.commitTransaction(c);
  }
  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    return this.#s.driver.rollbackTransaction(c);
  }
  savepoint(c: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.#s.driver.savepoint!(c, name, compile);
  }
  rollbackToSavepoint(c: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.#s.driver.rollbackToSavepoint!(c, name, compile);
  }
  releaseSavepoint(c: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    return this.#s.driver.releaseSavepoint!(c, name, compile);
  }
  async destroy(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.#s.refs -= 1;
    if (this.#s.refs > 0) return;
    if (shared.get(this.#key) === this.#s) shared.delete(this.#key);
    await this.#s.driver.destroy();
  }
}

/**
 * A Kysely dialect for MikroORM's `driverOptions`: every dialect made for the same file shares one
 * connection and one mutex; the connection closes when the last user destroys its driver.
 */
export function sharedSqliteDialect(path: string): Dialect {
  const key = path === ':memory:' ? `:memory:#${Math.random()}` : resolve(path);
  let s = shared.get(key);
  if (!s) {
    const native = openNative(path);
    const driver = new SqliteDialect({ database: native as unknown as SqliteDatabase }).createDriver();
    s = { driver, native, mutex: new Mutex(), refs: 0 };
    shared.set(key, s);
  }
  s.refs += 1;
  const entry = s;
  let driver: SharedDriver | undefined;
  const dialect: Dialect = {
    createDriver: () => (driver ??= new SharedDriver(key, entry)),
    createAdapter: () => new SqliteAdapter(),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => new SqliteIntrospector(db),
  };
  byDialect.set(dialect, entry);
  return dialect;
}

/**
 * Runs `fn` on the better-sqlite3 connection behind `dialect` (made by {@link sharedSqliteDialect})
 * while holding its mutex, as MikroORM's own queries do: it waits for a transaction in progress on the
 * shared connection instead of reading its uncommitted rows.
 * @throws Error when `dialect` is not a shared dialect; whatever `fn` throws (the mutex is released)
 */
export async function sqliteExclusive<T>(dialect: Dialect, fn: (db: BetterSqlite3.Database) => T): Promise<T> {
  const s = byDialect.get(dialect);
  if (!s) throw new Error('not a shared SQLite dialect');
  await s.mutex.lock();
  try {
    return fn(s.native);
  } finally {
    s.mutex.unlock();
  }
}

/**
 * A synchronous reader of `PRAGMA data_version` on this process's shared connection to `path`
 * (open through `openDatabase`). SQLite changes the value whenever another connection, i.e. another
 * process, commits to the file, and never for this connection's own commits: in-process caches use
 * it to notice writes they did not make. Null for `:memory:` (no other connection can exist) and
 * when the file is not open in this process. After the connection closes the reader returns NaN.
 * The pragma takes the file's shared lock (~10 µs of system calls), so the reader asks SQLite at most
 * once per event-loop turn and answers the rest of the turn from that reading: requests handled in
 * one turn are concurrent with any other process's commit anyway.
 */
export function sqliteDataVersion(path: string): (() => number) | null {
  if (path === ':memory:') return null;
  const s = shared.get(resolve(path));
  if (!s) return null;
  const native = s.native;
  const stmt = native.prepare('PRAGMA data_version').pluck();
  let reading: number | null = null;
  return () => {
    if (reading !== null) return reading;
    try {
      reading = Number(stmt.get());
    } catch {
      return Number.NaN;
    }
    setImmediate(() => { reading = null; });
    return reading;
  };
}
