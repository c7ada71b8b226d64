/**
 * @module authz/storage/sql/tx-events.test — issue 32: the audit event of an engine admin write is
 * stored in authz's outbox by the write's own transaction (SQLite and PostgreSQL), and not at all when
 * the transaction does not commit.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newEnvelope } from '@gatehouse/bus';
import { openScratchService, type ScratchService } from '@gatehouse/db';
import { withTxEvents, type TxEvents, type WriteInfo } from '../tx-events.ts';
import { fgaMigrations, sqlPortOf } from './db-port.ts';
import { createSqlStore } from './store.ts';
import type { AuthzStore } from '../ports.ts';

describe.each(['sqlite', 'postgres'] as const)('the SQL store writes the events of a write in its transaction (%s)', (type) => {
  let scratch: ScratchService;
  let store: AuthzStore;
  beforeAll(async () => {
    scratch = await openScratchService(type, { service: 'authz', entities: [], migrations: fgaMigrations });
    store = createSqlStore(sqlPortOf(scratch.db), { outboxTable: scratch.db.outbox.table });
  }, 60_000);
  afterAll(async () => {
    await scratch?.close();
  });

  const audit = (action: string): TxEvents & { seen: WriteInfo[] } => {
    const seen: WriteInfo[] = [];
    return { seen, written: false, make: (info) => { seen.push(info); return [newEnvelope('audit.recorded', 'authz', { action, resource_id: info.modelId ?? 'batch' } as never)]; } };
  };
  const tuple = { user: 'user:ada', relation: 'viewer', object: 'doc:1' };

  it('a model write and a tuple write each store their event, once, with the model id known', async () => {
    const model = audit('admin.fga_model_written');
    await withTxEvents(model, () => store.appendModel({ id: '01MODEL', dsl: 'model\n  schema 1.1\ntype user\n' }));
    expect(model).toMatchObject({ written: true, seen: [{ modelId: '01MODEL' }] });
    const tuples = audit('admin.fga_tuples_written');
    await withTxEvents(tuples, () => store.writeTuples([tuple], []));
    expect(tuples.written).toBe(true);
    expect((await scratch.outbox()).map((e) => [e.name, (e.data as { action: string; resource_id: string }).action, (e.data as { resource_id: string }).resource_id])).toEqual([
      ['audit.recorded', 'admin.fga_model_written', '01MODEL'],
      ['audit.recorded', 'admin.fga_tuples_written', 'batch'],
    ]);
  });

  // SQLite does not enforce a VARCHAR's length, so only PostgreSQL refuses the tuple below
  if (type === 'postgres') it('a tuple write that fails in the database stores neither its tuples, its change-log entries, its revision nor its event', async () => {
    const before = { outbox: (await scratch.outbox()).length, revision: await store.revision() };
    const failing = audit('admin.fga_tuples_written');
    // a relation longer than its column (100 characters): the statement fails after the revision row was locked
    const tooLong = { user: 'user:bob', relation: 'r'.repeat(200), object: 'doc:2' };
    await expect(withTxEvents(failing, () => store.writeTuples([{ user: 'user:bob', relation: 'viewer', object: 'doc:2' }, tooLong], []))).rejects.toThrow();
    expect(failing.written).toBe(false);
    expect((await scratch.outbox()).length).toBe(before.outbox);
    expect(await store.revision()).toBe(before.revision);
    expect((await store.readPage({ user: 'user:bob' }, 0, 10)).tuples).toEqual([]);
    expect(await store.readChanges(before.revision, before.revision + 1)).toEqual([]);
  });

  it('a refused reset (tuples exist) rolls its event back with it; a write outside withTxEvents stores none', async () => {
    const before = (await scratch.outbox()).length;
    const reset = audit('admin.fga_reset');
    expect(await withTxEvents(reset, () => store.resetIfEmpty())).toBe(false);
    expect(reset.written).toBe(false);
    await store.writeTuples([], [tuple]);
    expect((await scratch.outbox()).length).toBe(before);
    const ok = audit('admin.fga_reset');
    expect(await withTxEvents(ok, () => store.resetIfEmpty())).toBe(true);
    expect(ok.written).toBe(true);
    expect((await scratch.outbox()).length).toBe(before + 1);
  });
});
