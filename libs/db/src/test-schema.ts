/**
 * @module @gatehouse/db/test-schema
 * A tiny service schema used by this library's tests (one `notes` table + the outbox).
 */
import { defineEntity, p } from '@mikro-orm/core';
import type { EntitySchema } from '@mikro-orm/core';
import type { ServiceSchema } from './types.ts';

export const Note = defineEntity({
  name: 'Note',
  tableName: 'dbtest_notes',
  properties: {
    id: p.uuid().primary(),
    body: p.string(),
    createdAt: p.bigint('number').fieldName('created_at'),
  },
});

/** `dbtest` service: migrations 0001 (table) and 0002 (index). */
export const testSchema: ServiceSchema = {
  service: 'dbtest',
  entities: [Note as unknown as EntitySchema<any, any>],
  migrations: [
    {
      name: '0001_notes',
      async up({ ddl }) {
        await ddl.createTable('dbtest_notes', [
          { name: 'id', type: 'uuid', primary: true },
          { name: 'body', type: 'string' },
          { name: 'created_at', type: 'bigint' },
        ]);
      },
    },
    {
      name: '0002_notes_body_idx',
      async up({ ddl }) {
        await ddl.createIndex('dbtest_notes', 'dbtest_notes_body_idx', ['body']);
      },
    },
  ],
};
