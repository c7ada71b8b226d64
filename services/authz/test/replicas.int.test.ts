/** @module replicas.int.test: two engines (replicas) on one PostgreSQL or MariaDB store stay consistent (behaviour.md §7.1 Versions). */
import { describe, it, expect } from '@jest/globals';
import { createEngine } from '../src/domain/index.ts';
import { createSqlStore } from '../src/storage/sql/store.ts';
import type { TestDatabase } from './sql-adapters.ts';
import { openMysql, openPostgres } from './sql-adapters.ts';

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define viewer: [user, group#member]
`;

for (const [name, open] of [['postgres', openPostgres], ['mariadb', openMysql]] as Array<[string, () => Promise<TestDatabase>]>) {
  describe(`replicas on ${name}`, () => {
    it('see each other\'s writes from their next request, including concurrent writes and model changes', async () => {
      const db = await open();
      try {
        const a = createEngine({ store: createSqlStore(db.port) });
        const b = createEngine({ store: createSqlStore(db.port) });
        await a.writeModel(MODEL);
        await a.writeTuples([{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }]);
        expect((await b.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(true);

        // concurrent writes from both replicas, interleaved with reads
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => {
            const engine = i % 2 ? a : b;
            return engine.writeTuples([
              { user: `user:u${i}`, relation: 'member', object: `group:g${i % 3}` },
              { user: `group:g${i % 3}#member`, relation: 'viewer', object: `doc:${i}` },
            ]).then(() => engine.check(`user:u${i}`, [{ relation: 'viewer', object: `doc:${i}` }]));
          }),
        );
        await b.deleteTuples([{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }]);
        const fresh = createEngine({ store: createSqlStore(db.port) });
        for (let i = 0; i < 20; i++) {
          const expected = await fresh.listPermissions(`user:u${i}`, { relation: 'viewer', object_type: 'doc' });
          expect(await a.listPermissions(`user:u${i}`, { relation: 'viewer', object_type: 'doc' })).toEqual(expected);
          expect(await b.listPermissions(`user:u${i}`, { relation: 'viewer', object_type: 'doc' })).toEqual(expected);
          expect(expected.objects.length).toBeGreaterThan(0);
        }
        expect((await a.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);

        const next = await b.writeModel(MODEL.replace('define viewer: [user, group#member]', 'define viewer: [user]'));
        expect((await a.getModel()).id).toBe(next.id);
        expect((await a.check('user:u1', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
      } finally {
        await db.close();
      }
    });
  });
}
