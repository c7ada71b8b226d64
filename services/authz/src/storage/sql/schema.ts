/** @module authz/storage/sql/schema: DDL of the engine's tables for SQLite, PostgreSQL and MySQL/MariaDB. */

/** The SQL dialects the store speaks. */
export type SqlDialect = 'sqlite' | 'postgres' | 'mysql';

/**
 * `CREATE TABLE IF NOT EXISTS` statements (and the revision row) for `fga_models`, `fga_tuples`,
 * `fga_revision`, `fga_changes` (the change log replicas catch up from) and `fga_assertions` (OpenFGA
 * assertions per model version), with indexes for forward lookups `(object_type, object_id, relation)` and reverse
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
      'INSERT IGNORE INTO fga_revision (id, revision) VALUES (1, 0)',
      ...conditionColumns('mysql'),
    ...timeColumns('mysql'),
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
    dialect === 'postgres'
      ? 'INSERT INTO fga_revision (id, revision) VALUES (1, 0) ON CONFLICT (id) DO NOTHING'
      : 'INSERT OR IGNORE INTO fga_revision (id, revision) VALUES (1, 0)',
    ...conditionColumns(dialect),
    ...timeColumns(dialect),
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
