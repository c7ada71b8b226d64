/**
 * @module @gatehouse/db/bound-sql.test — MikroORM's `?` statements as driver placeholders and bound
 * values (issue 30 §5); the drivers' side is test/storage/sql-text.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { raw } from '@mikro-orm/core';
import { createLogger } from '@gatehouse/observability';
import { bindStatement } from './bound-sql.ts';
import { openDatabase } from './open.ts';

const platform = {
  quoteIdentifier: (id: string) => `"${id.replace(/"/g, '""')}"`,
  escape: (v: unknown) => `'${String(v)}'`,
  formatDate: (d: Date) => d.toISOString(),
};

describe('bindStatement', () => {
  it('leaves every value out of the text: `?` on SQLite and MySQL, `$n` on PostgreSQL', () => {
    const evil = "x'); drop table users; --\u0000";
    expect(bindStatement('sqlite', platform, 'select * from t where a = ? and b = ?', [evil, 2])).toEqual({ sql: 'select * from t where a = ? and b = ?', parameters: [evil, 2] });
    expect(bindStatement('postgres', platform, 'select * from t where a = ? and b = ?', [evil, 2])).toEqual({ sql: 'select * from t where a = $1 and b = $2', parameters: [evil, 2] });
    expect(bindStatement('mariadb', platform, 'update t set a = ? where id = ?', [evil, 'id'])).toEqual({ sql: 'update t set a = ? where id = ?', parameters: [evil, 'id'] });
  });

  it('quotes `??` identifiers into the text, reads `\\?` as a literal ?, expands lists and raw fragments', () => {
    expect(bindStatement('postgres', platform, 'select ?? from t where a in (?) and b \\? ?', ['col', ['x', 'y'], 'k'])).toEqual({
      sql: 'select "col" from t where a in ($1, $2) and b ? $3', parameters: ['x', 'y', 'k'],
    });
    expect(bindStatement('sqlite', platform, 'update t set n = ?, m = ? where id = ?', [raw('n + ?', [5]), raw('current_timestamp'), 7])).toEqual({
      sql: 'update t set n = n + ?, m = current_timestamp where id = ?', parameters: [5, 7],
    });
    expect(bindStatement('mysql', platform, 'insert into t (a, b) values ?', [[[1, 2], [3, 4]]])).toEqual({ sql: 'insert into t (a, b) values (?, ?), (?, ?)', parameters: [1, 2, 3, 4] });
  });

  it('converts the values a driver cannot bind as they are (booleans and Dates on SQLite, bigints, JSON objects)', () => {
    const d = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    const buf = Buffer.from([1, 2]);
    expect(bindStatement('sqlite', platform, '? ? ? ? ? ?', [true, false, d, null, undefined, { a: 1 }]).parameters).toEqual([1, 0, d.getTime(), null, null, '{"a":1}']);
    expect(bindStatement('postgres', platform, '? ? ? ?', [true, 12n, d, buf]).parameters).toEqual([true, '12', '2026-01-02T03:04:05.006Z', buf]);
    expect(bindStatement('mariadb', platform, '? ? ?', [false, 12n, d]).parameters).toEqual([false, '12', d.toString()]);
  });
});

describe('a bound connection', () => {
  it('executes and streams with the values bound (a quote and a NUL come back intact)', async () => {
    const db = await openDatabase({ type: 'sqlite', url: ':memory:' }, { service: 'boundsql', entities: [], migrations: [] }, { logger: createLogger('silent') });
    try {
      const value = "O'Brien\u0000?";
      expect(await db.execute('select ? as v, ? as n', [value, 2])).toEqual([{ v: value, n: 2 }]);
      const conn = db.fork().getConnection() as unknown as { stream(sql: string, params: unknown[]): AsyncIterable<unknown> };
      const rows: unknown[] = [];
      for await (const row of conn.stream('select ? as v', [value])) rows.push(row);
      expect(rows).toEqual([{ v: value }]);
    } finally {
      await db.close();
    }
  });
});
