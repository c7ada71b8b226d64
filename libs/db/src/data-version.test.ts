/** @module data-version.test: sqliteDataVersion notices other processes' commits, reading the pragma once per event-loop turn. */
import { createRequire } from 'node:module';
import { describe, it, expect } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { createScratchDatabase, openDatabase, sqliteDataVersion } from './index.ts';
import { testSchema } from './test-schema.ts';

interface Sqlite { exec(sql: string): void; close(): void }
const BetterSqlite3 = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => Sqlite;
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('sqliteDataVersion', () => {
  it('moves when another connection commits, not for this process, and is read once per turn', async () => {
    const scratch = await createScratchDatabase('sqlite');
    const db = await openDatabase(scratch.options, testSchema, { logger: createLogger('silent') });
    try {
      const version = sqliteDataVersion(scratch.options.url!)!;
      expect(version).not.toBeNull();
      const v0 = version();
      await db.fork().getConnection().execute('create table own_write (id integer)');
      await nextTurn();
      expect(version()).toBe(v0);

      const other = new BetterSqlite3(scratch.options.url!);
      other.exec('create table other_write (id integer)');
      // the same turn: the reading taken at its start stands
      expect(version()).toBe(v0);
      await nextTurn();
      const v1 = version();
      expect(v1).not.toBe(v0);
      other.exec('insert into other_write values (1)');
      other.close();
      await nextTurn();
      expect(version()).not.toBe(v1);
    } finally {
      await db.close();
      await scratch.drop();
    }
    expect(sqliteDataVersion(':memory:')).toBeNull();
  });
});
