/** @module authz/storage/sql/schema: DDL of the engine's tables for SQLite, PostgreSQL and MySQL/MariaDB. */

/** The SQL dialects the store speaks. */
export type SqlDialect = 'sqlite' | 'postgres' | 'mysql';

/**
 * `CREATE TABLE IF NOT EXISTS` statements (and the revision row) for `fga_models`, `fga_tuples`,
 * `fga_revision`, `fga_changes` (the change log replicas catch up from), `fga_assertions` (OpenFGA
 * assertions per model version), `fga_replicas` (the revision each replica has applied, ms of its last
 * report: what compaction of the change log may delete) and the OpenFGA API's other stores (`fga_stores`,
 * `fga_store_*`), with indexes for forward lookups `(object_type, object_id, relation)` and reverse
 * lookups `(subject, relation, object_type)`. Idempotent: safe to run at every start.
 * MySQL/MariaDB tables use `utf8mb4_bin` so matching is exact and case-sensitive, as tuple keys require.
 * Run every statement in order; an error for which {@link isDuplicateColumn} is true is expected on SQLite
 * once the condition columns exist, and is skipped.
 */
export function fgaSchemaStatements(dialect: SqlDialect): string[] {
  if (dialect === 'mysql') {
    const opts = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
    return [
      `CREATE TABLE IF NOT EXISTS fga_models (id VARCHAR(26) NOT NULL PRIMARY KEY, dsl MEDIUMTEXT NOT NULL, created_at BIGINT NOT NULL) ${opts}`,
      `CREATE TABLE IF NOT EXISTS fga_tuples (
        seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        tuple_key CHAR(64) NOT NULL,
        object_type VARCHAR(100) NOT NULL,
        object_id VARCHAR(255) NOT NULL,
        relation VARCHAR(100) NOT NULL,
        subject VARCHAR(512) NOT NULL,
        condition_name VARCHAR(100) NULL,
        condition_context MEDIUMTEXT NULL,
        UNIQUE KEY fga_tuples_key_uq (tuple_key),
        KEY fga_tuples_object_idx (object_type, object_id, relation),
        KEY fga_tuples_subject_idx (subject, relation, object_type)
      ) ${opts}`,
      `CREATE TABLE IF NOT EXISTS fga_revision (id INT NOT NULL PRIMARY KEY, revision BIGINT NOT NULL) ${opts}`,
      `CREATE TABLE IF NOT EXISTS fga_changes (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        revision BIGINT NOT NULL,
        op VARCHAR(8) NOT NULL,
        subject VARCHAR(512) NULL,
        relation VARCHAR(100) NULL,
        object_type VARCHAR(100) NULL,
        object_id VARCHAR(255) NULL,
        condition_name VARCHAR(100) NULL,
        condition_context MEDIUMTEXT NULL,
        KEY fga_changes_revision_idx (revision)
      ) ${opts}`,
      `CREATE TABLE IF NOT EXISTS fga_assertions (model_id VARCHAR(26) NOT NULL PRIMARY KEY, assertions MEDIUMTEXT NOT NULL) ${opts}`,
      `CREATE TABLE IF NOT EXISTS fga_replicas (replica_id VARCHAR(64) NOT NULL PRIMARY KEY, revision BIGINT NOT NULL, seen_at BIGINT NOT NULL) ${opts}`,
      'INSERT IGNORE INTO fga_revision (id, revision) VALUES (1, 0)',
      ...conditionColumns('mysql'),
      ...timeColumns('mysql'),
      ...storeTables('mysql'),
    ];
  }
  const seq = dialect === 'postgres' ? 'seq BIGSERIAL PRIMARY KEY' : 'seq INTEGER PRIMARY KEY AUTOINCREMENT';
  return [
    'CREATE TABLE IF NOT EXISTS fga_models (id VARCHAR(26) NOT NULL PRIMARY KEY, dsl TEXT NOT NULL, created_at BIGINT NOT NULL)',
    `CREATE TABLE IF NOT EXISTS fga_tuples (
      ${seq},
      tuple_key CHAR(64) NOT NULL UNIQUE,
      object_type VARCHAR(100) NOT NULL,
      object_id VARCHAR(255) NOT NULL,
      relation VARCHAR(100) NOT NULL,
      subject VARCHAR(512) NOT NULL,
      condition_name VARCHAR(100) NULL,
      condition_context TEXT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS fga_tuples_object_idx ON fga_tuples (object_type, object_id, relation)',
    'CREATE INDEX IF NOT EXISTS fga_tuples_subject_idx ON fga_tuples (subject, relation, object_type)',
    'CREATE TABLE IF NOT EXISTS fga_revision (id INTEGER NOT NULL PRIMARY KEY, revision BIGINT NOT NULL)',
    `CREATE TABLE IF NOT EXISTS fga_changes (
      ${dialect === 'postgres' ? 'id BIGSERIAL PRIMARY KEY' : 'id INTEGER PRIMARY KEY AUTOINCREMENT'},
      revision BIGINT NOT NULL,
      op VARCHAR(8) NOT NULL,
      subject VARCHAR(512) NULL,
      relation VARCHAR(100) NULL,
      object_type VARCHAR(100) NULL,
      object_id VARCHAR(255) NULL,
      condition_name VARCHAR(100) NULL,
      condition_context TEXT NULL
    )`,
    'CREATE INDEX IF NOT EXISTS fga_changes_revision_idx ON fga_changes (revision)',
    'CREATE TABLE IF NOT EXISTS fga_assertions (model_id VARCHAR(26) NOT NULL PRIMARY KEY, assertions TEXT NOT NULL)',
    'CREATE TABLE IF NOT EXISTS fga_replicas (replica_id VARCHAR(64) NOT NULL PRIMARY KEY, revision BIGINT NOT NULL, seen_at BIGINT NOT NULL)',
    dialect === 'postgres'
      ? 'INSERT INTO fga_revision (id, revision) VALUES (1, 0) ON CONFLICT (id) DO NOTHING'
      : 'INSERT OR IGNORE INTO fga_revision (id, revision) VALUES (1, 0)',
    ...conditionColumns(dialect),
    ...timeColumns(dialect),
    ...storeTables(dialect),
  ];
}

/**
 * The tables of the OpenFGA API's other stores (issue 36 §1: CreateStore): `fga_stores` (id, name, times in
 * ms) and, keyed by `store_id`, the same data Gatehouse's own store keeps in `fga_*` (tuples, models,
 * revision, change log, assertions). Gatehouse's store stays in the `fga_*` tables, unchanged, so its
 * queries carry no store column and its rows need no migration.
 */
function storeTables(dialect: SqlDialect): string[] {
  const text = dialect === 'mysql' ? 'MEDIUMTEXT' : 'TEXT';
  const opts = dialect === 'mysql' ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin' : '';
  const serial = (col: string): string => (dialect === 'postgres' ? `${col} BIGSERIAL PRIMARY KEY` : dialect === 'mysql' ? `${col} BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY` : `${col} INTEGER PRIMARY KEY AUTOINCREMENT`);
  const index = (name: string, table: string, cols: string): string =>
    dialect === 'mysql' ? `KEY ${name} (${cols})` : `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (${cols})`;
  const tuplesIdx = [index('fga_store_tuples_seq_idx', 'fga_store_tuples', 'store_id, seq'), index('fga_store_tuples_object_idx', 'fga_store_tuples', 'store_id, object_type, object_id, relation'), index('fga_store_tuples_subject_idx', 'fga_store_tuples', 'store_id, subject, relation, object_type')];
  const changesIdx = [index('fga_store_changes_revision_idx', 'fga_store_changes', 'store_id, revision')];
  const inline = (idx: string[]): string => (dialect === 'mysql' ? `, ${idx.join(', ')}` : '');
  const separate = (idx: string[]): string[] => (dialect === 'mysql' ? [] : idx);
  return [
    `CREATE TABLE IF NOT EXISTS fga_stores (id VARCHAR(26) NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)${opts}`,
    `CREATE TABLE IF NOT EXISTS fga_store_revision (store_id VARCHAR(26) NOT NULL PRIMARY KEY, revision BIGINT NOT NULL)${opts}`,
    `CREATE TABLE IF NOT EXISTS fga_store_models (store_id VARCHAR(26) NOT NULL, id VARCHAR(26) NOT NULL, dsl ${text} NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (store_id, id))${opts}`,
    `CREATE TABLE IF NOT EXISTS fga_store_tuples (
      ${serial('seq')},
      store_id VARCHAR(26) NOT NULL,
      tuple_key CHAR(64) NOT NULL,
      object_type VARCHAR(100) NOT NULL,
      object_id VARCHAR(255) NOT NULL,
      relation VARCHAR(100) NOT NULL,
      subject VARCHAR(512) NOT NULL,
      condition_name VARCHAR(100) NULL,
      condition_context ${text} NULL,
      written_at BIGINT NULL,
      UNIQUE (store_id, tuple_key)${inline(tuplesIdx)}
    )${opts}`,
    ...separate(tuplesIdx),
    `CREATE TABLE IF NOT EXISTS fga_store_changes (
      ${serial('id')},
      store_id VARCHAR(26) NOT NULL,
      revision BIGINT NOT NULL,
      op VARCHAR(8) NOT NULL,
      subject VARCHAR(512) NULL,
      relation VARCHAR(100) NULL,
      object_type VARCHAR(100) NULL,
      object_id VARCHAR(255) NULL,
      condition_name VARCHAR(100) NULL,
      condition_context ${text} NULL,
      changed_at BIGINT NULL${inline(changesIdx)}
    )${opts}`,
    ...separate(changesIdx),
    `CREATE TABLE IF NOT EXISTS fga_store_assertions (store_id VARCHAR(26) NOT NULL, model_id VARCHAR(26) NOT NULL, assertions ${text} NOT NULL, PRIMARY KEY (store_id, model_id))${opts}`,
  ];
}

/**
 * The tuple condition columns (OpenFGA schema 1.1 conditions) added to tables created before them.
 * PostgreSQL and MariaDB skip a column that exists (`ADD COLUMN IF NOT EXISTS`); SQLite has no such
 * clause, so its statements fail with `duplicate column name` on a table that has the column, which
 * {@link isDuplicateColumn} lets the caller ignore.
 */
function conditionColumns(dialect: SqlDialect): string[] {
  const text = dialect === 'mysql' ? 'MEDIUMTEXT' : 'TEXT';
  const ifNot = dialect === 'sqlite' ? '' : 'IF NOT EXISTS ';
  return ['fga_tuples', 'fga_changes'].flatMap((table) => [
    `ALTER TABLE ${table} ADD COLUMN ${ifNot}condition_name VARCHAR(100) NULL`,
    `ALTER TABLE ${table} ADD COLUMN ${ifNot}condition_context ${text} NULL`,
  ]);
}

/**
 * The write-time columns (milliseconds since the Unix epoch; OpenFGA's `timestamp` of Read and ReadChanges)
 * added to tables created before them, as {@link conditionColumns} adds its columns. Rows kept from before
 * have NULL there.
 */
function timeColumns(dialect: SqlDialect): string[] {
  const ifNot = dialect === 'sqlite' ? '' : 'IF NOT EXISTS ';
  return [
    `ALTER TABLE fga_tuples ADD COLUMN ${ifNot}written_at BIGINT NULL`,
    `ALTER TABLE fga_changes ADD COLUMN ${ifNot}changed_at BIGINT NULL`,
  ];
}

/** True when `err` is SQLite's refusal of an `ADD COLUMN` whose column exists (see fgaSchemaStatements). */
export function isDuplicateColumn(err: unknown): boolean {
  return /duplicate column name/i.test(err instanceof Error ? err.message : String(err));
}
