/** @module engine.test: the engine's validation, limits, pagination and cache refresh (behaviour.md §7). */
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { createEngine, parseSubject, PARTIAL_FETCH_LIMIT } from './index.ts';
import type { Engine } from './index.ts';
import { createMemoryStore } from '../storage/memory.ts';
import type { AuthzStore } from '../storage/ports.ts';
import { heldStore } from '../../test/conformance.ts';

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define owner: [user]
    define viewer: [user, user:*, group#member] or owner
`;

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work;
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return { code: (err as AppError).code, message: (err as AppError).message };
  }
  throw new Error('expected a refusal');
}

describe('parseSubject (behaviour.md §7.2)', () => {
  it('treats a bare id as user:<id>', () => {
    expect(parseSubject('anne')).toBe('user:anne');
    expect(parseSubject('service_account:c1')).toBe('service_account:c1');
  });
  it('refuses usersets and wildcards with the concrete-subject message', () => {
    expect(() => parseSubject('group:eng#member')).toThrow('user must be a concrete subject in type:id form, not a userset, got "group:eng#member"');
    expect(() => parseSubject('user:*')).toThrow('user must be a concrete subject in type:id form, not a userset, got "user:*"');
  });
  it('refuses text that is not type:id', () => {
    expect(() => parseSubject('user:')).toThrow('user must be in type:id form, got "user:"');
    expect(() => parseSubject('')).toThrow('user must be in type:id form, got ""');
  });
});

describe('engine', () => {
  let store: AuthzStore;
  let engine: Engine;
  beforeEach(async () => {
    store = createMemoryStore();
    engine = createEngine({ store });
  });

  it('refuses queries before a model is installed, and returns an empty model', async () => {
    expect(await engine.getModel()).toEqual({ id: '', dsl: '' });
    expect(await refusal(engine.check('user:anne', [{ relation: 'viewer', object: 'doc:1' }]))).toEqual({
      code: 'failed_precondition',
      message: 'no authorization model is installed',
    });
  });

  it('appends model versions with increasing ULID ids, the newest active', async () => {
    const a = await engine.writeModel(MODEL);
    const b = await engine.writeModel(MODEL);
    expect(a.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(b.id > a.id).toBe(true);
    expect(await engine.getModel()).toEqual({ id: b.id, dsl: MODEL });
  });

  it('refuses blank and oversized models', async () => {
    expect((await refusal(engine.writeModel('  '))).message).toBe('dsl is required');
    expect((await refusal(engine.writeModel(MODEL + '#'.repeat(256 * 1024)))).code).toBe('invalid_argument');
  });

  it('enforces tuple batch limits and forms', async () => {
    await engine.writeModel(MODEL);
    expect((await refusal(engine.writeTuples([]))).message).toBe('at least one tuple is required');
    const many = Array.from({ length: 101 }, (_, i) => ({ user: `user:u${i}`, relation: 'owner', object: 'doc:1' }));
    expect((await refusal(engine.writeTuples(many))).message).toBe('too many tuples: max 100 per request');
    expect((await refusal(engine.writeTuples([{ user: 'anne', relation: 'owner', object: 'doc:1' }]))).message).toBe(
      'each tuple requires user, relation and object',
    );
    expect((await refusal(engine.writeTuples([{ user: 'user:*', relation: 'owner', object: 'doc:1' }]))).message).toBe(
      'invalid tuple "user:* owner doc:1": type "user:*" is not allowed on relation "owner" of type "doc"',
    );
  });

  it('refuses ids and names longer than the storage columns', async () => {
    await engine.writeModel(MODEL);
    const long = 'x'.repeat(256);
    expect((await refusal(engine.writeTuples([{ user: 'user:anne', relation: 'owner', object: `doc:${long}` }]))).message).toBe(
      `invalid tuple "user:anne owner doc:${long}": ids are limited to 255 characters`,
    );
    const name = 'r'.repeat(101);
    expect((await refusal(engine.writeTuples([{ user: 'user:anne', relation: name, object: 'doc:1' }]))).message).toBe(
      `invalid tuple "user:anne ${name} doc:1": type and relation names are limited to 100 characters`,
    );
  });

  it('writes atomically: one bad tuple writes nothing', async () => {
    await engine.writeModel(MODEL);
    await refusal(
      engine.writeTuples([
        { user: 'user:anne', relation: 'owner', object: 'doc:1' },
        { user: 'user:anne', relation: 'nope', object: 'doc:1' },
      ]),
    );
    expect((await engine.readTuples({})).tuples).toEqual([]);
  });

  it('enforces the check batch limits', async () => {
    await engine.writeModel(MODEL);
    expect((await refusal(engine.check('user:anne', []))).message).toBe('at least one check is required');
    const many = Array.from({ length: 101 }, () => ({ relation: 'viewer', object: 'doc:1' }));
    expect((await refusal(engine.check('user:anne', many))).message).toBe('too many checks: max 100 per request');
    expect((await refusal(engine.check('user:anne', [{ relation: 'viewer', object: 'doc' }]))).message).toBe(
      'each check requires relation and object',
    );
    const ctx = Array.from({ length: 101 }, (_, i) => ({ user: `user:u${i}`, relation: 'owner', object: 'doc:1' }));
    expect((await refusal(engine.check('user:anne', [{ relation: 'viewer', object: 'doc:1', contextual_tuples: ctx }]))).message).toBe(
      'too many contextual tuples: max 100 per check',
    );
    // a typed wildcard subject is evaluated (behaviour.md §7.2: super-admins may name one; the RPC layer pins everyone else)
    expect((await engine.check('user:*', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
    expect((await refusal(engine.check('user:anne', [{ relation: 'viewer', object: 'folder:1' }]))).message).toBe('type "folder" is not defined');
  });

  it('evaluates 100 checks in one call, in input order', async () => {
    await engine.writeModel(MODEL);
    await engine.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:7' }]);
    const checks = Array.from({ length: 100 }, (_, i) => ({ relation: 'viewer', object: `doc:${i}` }));
    const results = await engine.check('anne', checks);
    expect(results).toHaveLength(100);
    expect(results.filter((r) => r.allowed).map((r) => r.object)).toEqual(['doc:7']);
    expect(results[3]).toEqual({ relation: 'viewer', object: 'doc:3', allowed: false });
  });

  it('answers each subject as itself when subjects repeat, and refuses a malformed one every time', async () => {
    await engine.writeModel(MODEL);
    await engine.writeTuples([
      { user: 'user:anne', relation: 'owner', object: 'doc:1' },
      { user: 'group:eng#member', relation: 'viewer', object: 'doc:2' },
    ]);
    const one = (subject: string, object: string) => engine.check(subject, [{ relation: 'viewer', object }]).then((r) => r[0]!.allowed);
    for (let round = 0; round < 2; round++) {
      expect(await one('user:anne', 'doc:1')).toBe(true);
      expect(await one('anne', 'doc:1')).toBe(true); // a bare id is user:<id>
      expect(await one('user:bob', 'doc:1')).toBe(false);
      expect(await one('group:eng#member', 'doc:2')).toBe(true); // a userset subject
      expect(await one('group:eng#member', 'doc:1')).toBe(false);
      expect((await refusal(one('user:', 'doc:1'))).code).toBe('invalid_argument');
      expect(await one('user:*', 'doc:1')).toBe(false); // a typed wildcard subject: no `user:*` tuple
    }
  });

  it('validates checks on objects it has already resolved exactly as new ones', async () => {
    await engine.writeModel(MODEL);
    await engine.writeTuples([
      { user: 'user:anne', relation: 'member', object: 'group:eng' },
      { user: 'group:eng#member', relation: 'viewer', object: 'doc:1' },
    ]);
    const check = (checks: Array<Record<string, unknown>>) => engine.check('user:anne', checks as never);
    // doc:1 is resolved first, and group:eng is visited on the way (through the userset)
    expect(await check([{ relation: 'viewer', object: 'doc:1' }])).toEqual([{ relation: 'viewer', object: 'doc:1', allowed: true }]);
    expect(await check([{ relation: 'member', object: 'group:eng' }, { relation: 'owner', object: 'doc:1' }])).toEqual([
      { relation: 'member', object: 'group:eng', allowed: true },
      { relation: 'owner', object: 'doc:1', allowed: false },
    ]);
    expect((await refusal(check([{ relation: 'editor', object: 'doc:1' }]))).message).toBe('relation "editor" is not defined on type "doc"');
    // one bad check refuses the whole batch, the known ones before it included
    expect((await refusal(check([{ relation: 'viewer', object: 'doc:1' }, { relation: 'viewer', object: 'doc' }]))).message).toBe(
      'each check requires relation and object',
    );
    expect((await refusal(check([{ relation: 'viewer', object: 'doc:1', contextual_tuples: { length: 0 } }]))).message).toBe(
      'each tuple requires user, relation and object',
    );
    // padded text is trimmed and echoed trimmed; contextual tuples still apply to a known object
    expect(await check([{ relation: ' owner ', object: ' doc:1 ' }])).toEqual([{ relation: 'owner', object: 'doc:1', allowed: false }]);
    expect(await check([{ relation: 'owner', object: 'doc:1', contextual_tuples: [{ user: 'user:anne', relation: 'owner', object: 'doc:1' }] }]))
      .toEqual([{ relation: 'owner', object: 'doc:1', allowed: true }]);
    expect(await check([{ relation: 'owner', object: 'doc:1' }])).toEqual([{ relation: 'owner', object: 'doc:1', allowed: false }]);
  });

  it('refuses a relation the object\'s type lacks even after a resolution asked it of that object, and answers repeats as the first time', async () => {
    // viewer from parent reaches organization:acme, whose type defines no viewer (OpenFGA skips that parent)
    await engine.writeModel(`model
  schema 1.1
type user
type organization
  relations
    define member: [user]
type folder
  relations
    define viewer: [user]
type doc
  relations
    define parent: [folder, organization]
    define viewer: [user] or viewer from parent
`);
    await engine.writeTuples([
      { user: 'organization:acme', relation: 'parent', object: 'doc:1' },
      { user: 'folder:f', relation: 'parent', object: 'doc:1' },
      { user: 'user:anne', relation: 'viewer', object: 'folder:f' },
    ]);
    const check = (checks: Array<Record<string, unknown>>) => engine.check('user:anne', checks as never);
    for (let round = 0; round < 2; round++) {
      expect(await check([{ relation: 'viewer', object: 'doc:1' }, { relation: 'member', object: 'organization:acme' }])).toEqual([
        { relation: 'viewer', object: 'doc:1', allowed: true },
        { relation: 'member', object: 'organization:acme', allowed: false },
      ]);
      expect(await refusal(check([{ relation: 'viewer', object: 'doc:1' }, { relation: 'viewer', object: 'organization:acme' }]))).toEqual({
        code: 'invalid_argument',
        message: 'relation "viewer" is not defined on type "organization"',
      });
    }
  });

  it('pages reads with a filter-bound continuation token', async () => {
    await engine.writeModel(MODEL);
    await engine.writeTuples(Array.from({ length: 5 }, (_, i) => ({ user: `user:u${i}`, relation: 'owner', object: `doc:${i}` })));
    await engine.writeTuples([{ user: 'user:u0', relation: 'member', object: 'group:g' }]);
    const first = await engine.readTuples({ object: 'doc:', page_size: 2 });
    expect(first.tuples.map((t) => t.object)).toEqual(['doc:0', 'doc:1']);
    expect(first.continuation_token).not.toBeNull();
    const second = await engine.readTuples({ object: 'doc:', page_size: 2, continuation_token: first.continuation_token });
    expect(second.tuples.map((t) => t.object)).toEqual(['doc:2', 'doc:3']);
    const last = await engine.readTuples({ object: 'doc:', page_size: 2, continuation_token: second.continuation_token });
    expect(last).toEqual({ tuples: [{ user: 'user:u4', relation: 'owner', object: 'doc:4' }], continuation_token: null, written_at: [expect.any(Number)] });
    expect((await refusal(engine.readTuples({ object: 'group:', continuation_token: first.continuation_token }))).message).toBe(
      'invalid continuation token',
    );
    expect((await refusal(engine.readTuples({ page_size: 101 }))).message).toBe('page_size must be between 1 and 100');
    expect((await engine.readTuples({ user: 'user:u0' })).tuples).toHaveLength(2);
  });

  it('treats re-writing and deleting missing tuples as no-ops', async () => {
    await engine.writeModel(MODEL);
    const t = { user: 'user:anne', relation: 'owner', object: 'doc:1' };
    await engine.writeTuples([t]);
    await engine.writeTuples([t]);
    expect((await engine.readTuples({})).tuples).toEqual([t]);
    await engine.deleteTuples([t]);
    await engine.deleteTuples([t]);
    expect((await engine.check('user:anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
  });

  it('refuses reset while tuples exist, then resets the whole store', async () => {
    await engine.writeModel(MODEL);
    await engine.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }]);
    expect(await refusal(engine.reset())).toEqual({
      code: 'failed_precondition',
      message: 'remove all relationship tuples before resetting the authorization model',
    });
    await engine.deleteTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }]);
    await engine.reset();
    expect(await engine.getModel()).toEqual({ id: '', dsl: '' });
  });

  it('deletes the tuples where user:<id> is the user or the object', async () => {
    const dsl = MODEL.replace('type user\n', 'type user\n  relations\n    define manager: [user]\n');
    await engine.writeModel(dsl);
    await engine.writeTuples([
      { user: 'user:anne', relation: 'owner', object: 'doc:1' },
      { user: 'user:bob', relation: 'manager', object: 'user:anne' },
      { user: 'user:bob', relation: 'owner', object: 'doc:2' },
    ]);
    expect(await engine.deleteUserTuples('anne')).toBe(2);
    expect((await engine.readTuples({})).tuples).toEqual([{ user: 'user:bob', relation: 'owner', object: 'doc:2' }]);
    expect((await engine.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
  });

  it('sees writes made through another replica on its next request', async () => {
    await engine.writeModel(MODEL);
    const replica = createEngine({ store });
    expect((await replica.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
    await engine.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }]);
    expect((await replica.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(true);
    const next = await engine.writeModel(MODEL.replace('or owner', ''));
    expect((await replica.getModel()).id).toBe(next.id);
    expect((await replica.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
  });

  it('loads a store larger than one page, and a write landing between pages is seen on the next call', async () => {
    await engine.writeModel(MODEL);
    const docs = Array.from({ length: 25_000 }, (_, i) => ({ user: `user:u${i % 50}`, relation: 'viewer', object: `doc:${i}` }));
    // straight into the store: the engine takes 100 tuples a call
    for (let i = 0; i < docs.length; i += 5000) await store.writeTuples(docs.slice(i, i + 5000), []);
    let pages = 0;
    const paging: AuthzStore = {
      ...store,
      readPage: async (filter, afterSeq, limit) => {
        const page = await store.readPage(filter, afterSeq, limit);
        // another replica writes after the first page: one tuple read already goes, one not read yet goes, one is new
        if (Object.keys(filter).length === 0 && pages++ === 0) {
          await engine.deleteTuples([docs[0]!, docs[24_000]!]);
          await engine.writeTuples([{ user: 'user:late', relation: 'viewer', object: 'doc:late' }]);
        }
        return page;
      },
    };
    const replica = createEngine({ store: paging });
    // the full load itself (a check would answer from the store while it runs)
    await replica.warm();
    const results = await replica.check('u0', [{ relation: 'viewer', object: 'doc:0' }, { relation: 'viewer', object: 'doc:50' }, { relation: 'viewer', object: 'doc:24000' }]);
    expect(results.map((r) => r.allowed)).toEqual([false, true, false]);
    expect((await replica.check('late', [{ relation: 'viewer', object: 'doc:late' }]))[0]?.allowed).toBe(true);
    expect((await replica.check('u49', [{ relation: 'viewer', object: 'doc:24999' }]))[0]?.allowed).toBe(true);
    expect(pages).toBeGreaterThan(2);
    expect(replica.stats().tuples).toBe(25_000 - 2 + 1);
  });

  it('catches up from the change log after another replica writes, without reloading every tuple', async () => {
    await engine.writeModel(MODEL);
    let fullReads = 0;
    // a full load reads every tuple in pages, starting from the first
    const counting: AuthzStore = {
      ...store,
      readPage: async (filter, afterSeq, limit) => {
        if (afterSeq === 0 && Object.keys(filter).length === 0) fullReads++;
        return store.readPage(filter, afterSeq, limit);
      },
    };
    const replica = createEngine({ store: counting });
    await engine.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }]);
    expect((await replica.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(true);
    expect(fullReads).toBe(1);
    await engine.writeTuples([{ user: 'user:bob', relation: 'member', object: 'group:g' }, { user: 'group:g#member', relation: 'viewer', object: 'doc:2' }]);
    await engine.deleteTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }]);
    await engine.deleteUserTuples('carl');
    const results = await replica.check('bob', [{ relation: 'viewer', object: 'doc:2' }]);
    expect(results[0]?.allowed).toBe(true);
    expect((await replica.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))[0]?.allowed).toBe(false);
    expect(fullReads).toBe(1);
    expect(replica.stats()).toMatchObject({ tuples: 2, full_loads: 1, catch_ups: 1 });
    await engine.writeModel(MODEL);
    await replica.check('anne', [{ relation: 'viewer', object: 'doc:1' }]);
    expect(fullReads).toBe(2);
    expect(replica.stats()).toMatchObject({ revision: await store.revision(), tuples: 2, full_loads: 2 });
  });

  it('lists permissions sorted by type, relation and object, with distinct objects', async () => {
    await engine.writeModel(MODEL);
    await engine.writeTuples([
      { user: 'user:anne', relation: 'owner', object: 'doc:b' },
      { user: 'user:anne', relation: 'member', object: 'group:g' },
      { user: 'group:g#member', relation: 'viewer', object: 'doc:a' },
    ]);
    expect(await engine.listPermissions('anne', {})).toEqual({
      objects: ['doc:b', 'doc:a', 'group:g'],
      permissions: [
        { object: 'doc:b', relation: 'owner' },
        { object: 'doc:a', relation: 'viewer' },
        { object: 'doc:b', relation: 'viewer' },
        { object: 'group:g', relation: 'member' },
      ],
      truncated: false,
    });
    expect((await engine.listPermissions('anne', { object_type: 'doc', relation: 'viewer' })).objects).toEqual(['doc:a', 'doc:b']);
    expect((await refusal(engine.listPermissions('anne', { object_type: 'folder' }))).message).toBe('type "folder" is not defined');
  });

  it('caps list_permissions at 1000 entries with truncated', async () => {
    await engine.writeModel(MODEL);
    for (let b = 0; b < 11; b++) {
      await engine.writeTuples(Array.from({ length: 100 }, (_, i) => ({ user: 'user:anne', relation: 'owner', object: `doc:${b * 100 + i}` })));
    }
    const owners = await engine.listPermissions('anne', { relation: 'owner' });
    expect(owners.permissions).toHaveLength(1000);
    expect(owners.truncated).toBe(true);
    expect(owners.objects).toHaveLength(1000);
  });

  it('validates list_users and expand inputs', async () => {
    await engine.writeModel(MODEL);
    expect((await refusal(engine.listUsers({ object: 'doc:1', relation: 'viewer' }))).message).toBe('object, relation and user_type are required');
    expect((await refusal(engine.expand({ object: 'doc:1' }))).message).toBe('relation and object are required');
  });
});

describe('answers remembered across calls (ResolverCache)', () => {
  let engine: Engine;
  beforeEach(async () => {
    engine = createEngine({ store: createMemoryStore() });
    await engine.writeModel(MODEL);
  });

  const allowed = async (subject: string, relation: string, object: string): Promise<boolean> =>
    (await engine.check(subject, [{ relation, object }]))[0]!.allowed;

  it('sees every write and delete on the next call, for the same subject', async () => {
    expect(await allowed('user:anne', 'viewer', 'doc:1')).toBe(false);
    await engine.writeTuples([{ user: 'group:eng#member', relation: 'viewer', object: 'doc:1' }]);
    expect(await allowed('user:anne', 'viewer', 'doc:1')).toBe(false);
    await engine.writeTuples([{ user: 'user:anne', relation: 'member', object: 'group:eng' }]);
    expect(await allowed('user:anne', 'viewer', 'doc:1')).toBe(true);
    await engine.deleteTuples([{ user: 'user:anne', relation: 'member', object: 'group:eng' }]);
    expect(await allowed('user:anne', 'viewer', 'doc:1')).toBe(false);
    await engine.writeTuples([{ user: 'user:*', relation: 'viewer', object: 'doc:1' }]);
    expect(await allowed('user:anne', 'viewer', 'doc:1')).toBe(true);
    expect(await allowed('user:bob', 'viewer', 'doc:1')).toBe(true);
  });

  it('answers subjects in no tuple alike: wildcards, denials and no depth error, until a tuple names one', async () => {
    // group:g0 <- g1#member <- ... <- g29#member: resolving g0's members goes 29 hops deep
    const chain = Array.from({ length: 29 }, (_, i) => ({ user: `group:g${i + 1}#member`, relation: 'member', object: `group:g${i}` }));
    for (let i = 0; i < chain.length; i += 10) await engine.writeTuples(chain.slice(i, i + 10));
    await engine.writeTuples([{ user: 'user:*', relation: 'viewer', object: 'doc:public' }]);
    const deep = (subject: string): Promise<unknown> => engine.check(subject, [{ relation: 'member', object: 'group:g0' }]);
    for (const subject of ['user:zed', 'user:yan', 'zed']) {
      expect(await allowed(subject, 'viewer', 'doc:public')).toBe(true);
      expect(await allowed(subject, 'viewer', 'doc:private')).toBe(false);
      expect(await allowed(subject, 'member', 'group:g10')).toBe(false);
      // in no group at all, so in no group's member relation: false at the depth limit, as OpenFGA (issue 21)
      expect(await deep(subject)).toEqual([{ relation: 'member', object: 'group:g0', allowed: false }]);
    }
    // a userset is always related to itself, whether or not a tuple names it
    expect(await allowed('group:lonely#member', 'member', 'group:lonely')).toBe(true);
    expect(await allowed('group:other#member', 'member', 'group:lonely')).toBe(false);
    await engine.writeTuples([{ user: 'user:yan', relation: 'member', object: 'group:g20' }]);
    expect(await allowed('user:zed', 'member', 'group:g10')).toBe(false);
    expect(await allowed('user:yan', 'member', 'group:g10')).toBe(true);
    expect(await allowed('user:yan', 'viewer', 'doc:public')).toBe(true);
    expect(await allowed('user:xavier', 'member', 'group:g10')).toBe(false);
    expect(await deep('user:xavier')).toEqual([{ relation: 'member', object: 'group:g0', allowed: false }]);
    // in a group off the chain: the walk could still grant, so the depth limit fails the check
    await engine.writeTuples([{ user: 'user:walt', relation: 'member', object: 'group:side' }]);
    expect(await refusal(deep('user:walt'))).toEqual({ code: 'invalid_argument', message: 'resolution too complex' });
    expect(await deep('user:xavier')).toEqual([{ relation: 'member', object: 'group:g0', allowed: false }]);
    await engine.deleteTuples([{ user: 'user:yan', relation: 'member', object: 'group:g20' }]);
    expect(await allowed('user:yan', 'member', 'group:g10')).toBe(false);
  });

  it('answers a deep chain the same way whatever was asked before (depth limit 25)', async () => {
    // group:g0 <- g1#member <- ... <- g29#member; anne is a member of g29
    const chain = Array.from({ length: 29 }, (_, i) => ({ user: `group:g${i + 1}#member`, relation: 'member', object: `group:g${i}` }));
    for (let i = 0; i < chain.length; i += 10) await engine.writeTuples(chain.slice(i, i + 10));
    await engine.writeTuples([{ user: 'user:anne', relation: 'member', object: 'group:g29' }]);
    const deep = (): Promise<unknown> => engine.check('user:anne', [{ relation: 'member', object: 'group:g0' }]);
    expect(await refusal(deep())).toEqual({ code: 'invalid_argument', message: 'resolution too complex' });
    // g10 is 19 hops from anne: allowed, and its answer is now remembered
    expect(await allowed('user:anne', 'member', 'group:g10')).toBe(true);
    expect(await refusal(deep())).toEqual({ code: 'invalid_argument', message: 'resolution too complex' });
    expect(await allowed('user:anne', 'member', 'group:g5')).toBe(true);
    expect(await refusal(deep())).toEqual({ code: 'invalid_argument', message: 'resolution too complex' });
  });
});

describe('check, lists, expand and user deletion while the full snapshot loads (issue 22 §3, issue 38 §1)', () => {
  const LAZY_MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define viewer: [user]
type doc
  relations
    define parent: [folder]
    define blocked: [user]
    define viewer: [user, group#member, user with level] or viewer from parent
    define can_read: viewer but not blocked
condition level(n: int) {
  n > 1
}
`;
  let store: AuthzStore;
  let writer: Engine;
  let held: ReturnType<typeof heldStore>;
  let replica: Engine;
  beforeEach(async () => {
    store = createMemoryStore();
    writer = createEngine({ store });
    await writer.writeModel(LAZY_MODEL);
    // `user relation object` each
    const plain = ['user:anne member group:eng', 'group:eng#member member group:all', 'group:all#member viewer doc:1', 'folder:f parent doc:1', 'user:bob viewer folder:f', 'user:bob blocked doc:1'];
    await writer.writeTuples([
      ...plain.map((text) => {
        const [user, relation, object] = text.split(' ') as [string, string, string];
        return { user, relation, object };
      }),
      { user: 'user:carl', relation: 'viewer', object: 'doc:1', condition: { name: 'level', context: null } },
    ]);
    // a replica starting: its full load reads the first page only when the test releases it
    held = heldStore(store);
    replica = createEngine({ store: held.store });
  });
  afterEach(() => held.release());

  const ask = async (user: string, relation: string, object: string, context?: Record<string, unknown>): Promise<boolean | undefined> =>
    (await replica.check(user, [{ relation, object, ...(context ? { context } : {}) }]))[0]?.allowed;

  it('answers usersets, tuple-to-userset, exclusion and conditions from the store, as the snapshot does', async () => {
    expect(await ask('anne', 'viewer', 'doc:1')).toBe(true);
    expect(await ask('anne', 'can_read', 'doc:1')).toBe(true);
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(true);
    expect(await ask('bob', 'can_read', 'doc:1')).toBe(false);
    expect(await ask('carl', 'viewer', 'doc:1', { n: 2 })).toBe(true);
    expect(await ask('carl', 'viewer', 'doc:1', { n: 1 })).toBe(false);
    expect(await refusal(replica.check('carl', [{ relation: 'viewer', object: 'doc:1' }]))).toEqual({
      code: 'invalid_argument',
      message: "failed to evaluate relationship condition 'level': tuple 'doc:1#viewer@user:carl' is missing context parameters '[n]'",
    });
    expect(await ask('dan', 'viewer', 'doc:1')).toBe(false);
    expect(await ask('group:eng#member', 'viewer', 'doc:1')).toBe(true);
    // a batch: every answer in input order
    expect((await replica.check('anne', [{ relation: 'member', object: 'group:all' }, { relation: 'viewer', object: 'doc:2' }])).map((r) => r.allowed)).toEqual([true, false]);
    expect(replica.stats()).toMatchObject({ full_loads: 0, partial_waits: 0, partial_checks: 10 });
    // doc:1, group:all, group:eng, folder:f and doc:2 were read once each, then kept
    expect(replica.stats().partial_fetches).toBe(5);
    // the snapshot, once loaded, gives the same answers, and no check reads the store per object any more
    held.release();
    await replica.warm();
    expect(await ask('anne', 'can_read', 'doc:1')).toBe(true);
    expect(await ask('bob', 'can_read', 'doc:1')).toBe(false);
    expect(await ask('carl', 'viewer', 'doc:1', { n: 2 })).toBe(true);
    expect(await ask('eve', 'viewer', 'doc:3')).toBe(false);
    expect(replica.stats()).toMatchObject({ full_loads: 1, partial_checks: 10, partial_fetches: 5, tuples: 7 });
  });

  it('sees a write made during the load on the next check (read-your-writes), its own or another replica\'s', async () => {
    expect(await ask('dan', 'can_read', 'doc:1')).toBe(false);
    // validated against the model of the store's revision: the write does not wait for the held load
    await replica.writeTuples([{ user: 'user:dan', relation: 'member', object: 'group:eng' }]);
    expect(await ask('dan', 'can_read', 'doc:1')).toBe(true);
    expect((await refusal(replica.writeTuples([{ user: 'user:dan', relation: 'owner', object: 'doc:1' }]))).message).toContain('owner');
    await writer.writeTuples([{ user: 'user:dan', relation: 'blocked', object: 'doc:1' }]);
    expect(await ask('dan', 'can_read', 'doc:1')).toBe(false);
    await replica.deleteTuples([{ user: 'group:all#member', relation: 'viewer', object: 'doc:1' }]);
    expect(await ask('anne', 'viewer', 'doc:1')).toBe(false);
    // a model change during the load: the next check reads under the new model
    await writer.writeModel(LAZY_MODEL.replace(' or viewer from parent', ''));
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(false);
    expect(replica.stats()).toMatchObject({ full_loads: 0, partial_waits: 0 });
    held.release();
    await replica.warm();
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(false);
    expect(await ask('dan', 'viewer', 'doc:1')).toBe(false);
    expect(await ask('carl', 'viewer', 'doc:1', { n: 5 })).toBe(true);
  });

  it('answers from the store again while a model change reloads a loaded replica', async () => {
    held.release();
    await replica.warm();
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(true);
    expect(replica.stats()).toMatchObject({ full_loads: 1, partial_checks: 0 });
    held.hold();
    await writer.writeModel(LAZY_MODEL.replace(' or viewer from parent', ''));
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(false);
    expect(await ask('anne', 'viewer', 'doc:1')).toBe(true);
    expect(replica.stats()).toMatchObject({ full_loads: 1, partial_checks: 2 });
    held.release();
    await replica.warm();
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(false);
    expect(replica.stats()).toMatchObject({ full_loads: 2, partial_checks: 2 });
  });

  it('maps a store failure while fetching to unavailable', async () => {
    const failing = heldStore({
      ...store,
      readPage: async (filter, afterSeq, limit) => {
        if (filter.objectId !== undefined) throw new Error('connection reset');
        return store.readPage(filter, afterSeq, limit);
      },
    });
    const broken = createEngine({ store: failing.store });
    try {
      expect(await refusal(broken.check('anne', [{ relation: 'viewer', object: 'doc:1' }]))).toEqual({ code: 'unavailable', message: 'authorization store is unavailable' });
    } finally {
      failing.release();
    }
  });

  it(`waits for the full load rather than fetch more than ${PARTIAL_FETCH_LIMIT} objects for one call`, async () => {
    // doc:wide is viewed by the members of 1100 groups: a check for someone in none reads every group
    const groups = Array.from({ length: 1100 }, (_, i) => ({ user: `group:g${i}#member`, relation: 'viewer', object: 'doc:wide' }));
    for (let i = 0; i < groups.length; i += 100) await writer.writeTuples(groups.slice(i, i + 100));
    await writer.writeTuples([{ user: 'user:zoe', relation: 'member', object: 'group:g1099' }]);
    const answer = replica.check('zoe', [{ relation: 'viewer', object: 'doc:wide' }]);
    while (replica.stats().partial_waits === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(replica.stats()).toMatchObject({ partial_checks: 0, partial_fetches: 1, full_loads: 0 });
    held.release();
    expect((await answer)[0]?.allowed).toBe(true);
    expect(replica.stats()).toMatchObject({ partial_waits: 1, full_loads: 1 });
  });

  it('answers list_permissions, list_users and expand from the store, as the loaded snapshot does', async () => {
    const queries = async (engine: Engine): Promise<unknown[]> => [
      await engine.listPermissions('anne', { object_type: 'doc' }),
      await engine.listPermissions('bob', { relation: 'can_read', object_type: 'doc' }),
      await engine.listPermissions('group:eng#member', { relation: 'viewer' }),
      await engine.listPermissions('carl', { relation: 'viewer', object_type: 'doc', context: { n: 3 } }),
      await engine.listUsers({ object: 'doc:1', relation: 'can_read', user_type: 'user', context: { n: 0 } }),
      await engine.listUsers({ object: 'doc:1', relation: 'viewer', user_type: 'group#member', context: { n: 2 } }),
      await engine.listUsers({ object: 'doc:1', relation: 'viewer', user_type: 'user', context: { n: 0 } }),
      await engine.expand({ object: 'doc:1', relation: 'viewer' }),
      await engine.expand({ object: 'group:all', relation: 'member' }),
    ];
    const during = await queries(replica);
    // anne reads doc:1 through two groups; bob views it through its folder but is blocked
    expect(during[0]).toEqual({ objects: ['doc:1'], permissions: [{ object: 'doc:1', relation: 'can_read' }, { object: 'doc:1', relation: 'viewer' }], truncated: false });
    expect(during[1]).toEqual({ objects: [], permissions: [], truncated: false });
    expect(during[4]).toEqual({ users: ['user:anne'], truncated: false });
    expect(during[5]).toEqual({ users: ['group:all#member', 'group:eng#member'], truncated: false });
    expect(during[6]).toEqual({ users: ['user:anne', 'user:bob'], truncated: false });
    expect(replica.stats()).toMatchObject({ full_loads: 0, partial_waits: 0, partial_lists: 9, partial_checks: 0 });
    expect(replica.stats().partial_fetches).toBeGreaterThan(0);
    // a condition that cannot be evaluated fails the call while loading as it does after
    const missing = { code: 'invalid_argument', message: "failed to evaluate relationship condition 'level': tuple 'doc:1#viewer@user:carl' is missing context parameters '[n]'" };
    expect(await refusal(replica.listUsers({ object: 'doc:1', relation: 'viewer', user_type: 'user' }))).toEqual(missing);
    // the same answers from the loaded snapshot, which the replica then uses
    held.release();
    await replica.warm();
    expect(await queries(replica)).toEqual(during);
    expect(await queries(writer)).toEqual(during);
    expect(await refusal(replica.listUsers({ object: 'doc:1', relation: 'viewer', user_type: 'user' }))).toEqual(missing);
    expect(replica.stats()).toMatchObject({ full_loads: 1, partial_lists: 10 });
  });

  it('sees a write made during the load in the next list (read-your-writes)', async () => {
    expect((await replica.listPermissions('dan', { relation: 'viewer', object_type: 'doc' })).objects).toEqual([]);
    await writer.writeTuples([{ user: 'user:dan', relation: 'member', object: 'group:eng' }, { user: 'user:dan', relation: 'viewer', object: 'folder:g' }, { user: 'folder:g', relation: 'parent', object: 'doc:2' }]);
    expect((await replica.listPermissions('dan', { relation: 'viewer', object_type: 'doc' })).objects).toEqual(['doc:1', 'doc:2']);
    expect((await replica.listUsers({ object: 'doc:2', relation: 'viewer', user_type: 'user' })).users).toEqual(['user:dan']);
    expect(replica.stats()).toMatchObject({ full_loads: 0, partial_waits: 0 });
  });

  it('deletes a user\'s tuples without waiting for the load, and the next check and list see it', async () => {
    expect(await ask('anne', 'viewer', 'doc:1')).toBe(true);
    // only the held load stands between this call and its answer: it must not wait for it
    expect(await replica.deleteUserTuples('anne')).toBe(1);
    expect(await ask('anne', 'viewer', 'doc:1')).toBe(false);
    expect((await replica.listUsers({ object: 'group:eng', relation: 'member', user_type: 'user' })).users).toEqual([]);
    expect(replica.stats()).toMatchObject({ full_loads: 0 });
    held.release();
    await replica.warm();
    expect(await ask('anne', 'viewer', 'doc:1')).toBe(false);
    expect(await ask('bob', 'viewer', 'doc:1')).toBe(true);
    expect(replica.stats()).toMatchObject({ full_loads: 1, tuples: 6 });
  });

  it(`waits for the full load rather than fetch more than ${PARTIAL_FETCH_LIMIT} objects for one list`, async () => {
    const groups = Array.from({ length: 1100 }, (_, i) => ({ user: `group:g${i}#member`, relation: 'viewer', object: 'doc:wide' }));
    for (let i = 0; i < groups.length; i += 100) await writer.writeTuples(groups.slice(i, i + 100));
    await writer.writeTuples([{ user: 'user:zoe', relation: 'member', object: 'group:g1099' }]);
    const answer = replica.listUsers({ object: 'doc:wide', relation: 'viewer', user_type: 'user' });
    while (replica.stats().partial_waits === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(replica.stats()).toMatchObject({ partial_lists: 0, full_loads: 0 });
    held.release();
    expect(await answer).toEqual({ users: ['user:zoe'], truncated: false });
    expect(replica.stats()).toMatchObject({ partial_waits: 1, full_loads: 1 });
  });
});

describe('write and readChanges (OpenFGA Write and ReadChanges, issue 36)', () => {
  let engine: Engine;
  beforeEach(async () => {
    engine = createEngine({ store: createMemoryStore() });
    await engine.writeModel(MODEL);
  });

  it('writes and deletes in one revision, all or nothing', async () => {
    await engine.write([{ user: 'user:a', relation: 'owner', object: 'doc:1' }], []);
    const bad = await refusal(engine.write([{ user: 'user:b', relation: 'owner', object: 'doc:2' }, { user: 'user:b', relation: 'nope', object: 'doc:2' }], [{ user: 'user:a', relation: 'owner', object: 'doc:1' }]));
    expect(bad.code).toBe('invalid_argument');
    expect((await engine.readTuples({})).tuples.map((t) => t.user)).toEqual(['user:a']);
    await engine.write([{ user: 'user:b', relation: 'owner', object: 'doc:2' }], [{ user: 'user:a', relation: 'owner', object: 'doc:1' }]);
    expect((await engine.readTuples({})).tuples.map((t) => t.user)).toEqual(['user:b']);
    expect(await engine.check('user:a', [{ relation: 'viewer', object: 'doc:1' }])).toEqual([{ relation: 'viewer', object: 'doc:1', allowed: false }]);
    expect((await refusal(engine.write([], []))).message).toBe('at least one tuple is required');
  });

  it('pages the change log by revision and entry, filtered by object type, oldest first', async () => {
    await engine.write([1, 2, 3].map((i) => ({ user: `user:u${i}`, relation: 'owner', object: `doc:${i}` })), []);
    await engine.write([{ user: 'user:u4', relation: 'member', object: 'group:g' }], [{ user: 'user:u1', relation: 'owner', object: 'doc:1' }]);
    const read = engine.readChanges!;
    const first = await read({ objectType: 'doc', afterRevision: 0, afterIndex: 0, limit: 2 });
    expect(first.changes.map((c) => `${c.op} ${c.tuple.object}`)).toEqual(['write doc:1', 'write doc:2']);
    const second = await read({ objectType: 'doc', afterRevision: first.cursor!.revision, afterIndex: first.cursor!.index, limit: 10 });
    expect(second.changes.map((c) => `${c.op} ${c.tuple.object}`)).toEqual(['write doc:3', 'delete doc:1']);
    const none = await read({ objectType: 'doc', afterRevision: second.cursor!.revision, afterIndex: second.cursor!.index, limit: 10 });
    expect(none).toEqual({ changes: [], cursor: null });
    const all = await read({ afterRevision: 0, afterIndex: 0, limit: 10 });
    expect(all.changes.map((c) => c.tuple.object)).toEqual(['doc:1', 'doc:2', 'doc:3', 'group:g', 'doc:1']);
  });

  it('answers when each change was written and skips the older ones given a start time (OpenFGA start_time)', async () => {
    await engine.write([{ user: 'user:a', relation: 'owner', object: 'doc:1' }], []);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const since = Date.now();
    await engine.write([{ user: 'user:b', relation: 'owner', object: 'doc:2' }], []);
    const read = engine.readChanges!;
    const all = await read({ afterRevision: 0, afterIndex: 0, limit: 10 });
    expect(all.changes.map((c) => c.tuple.user)).toEqual(['user:a', 'user:b']);
    expect(all.changes[0]!.at).toBeLessThan(since);
    expect(all.changes[1]!.at).toBeGreaterThanOrEqual(since);
    const recent = await read({ afterRevision: 0, afterIndex: 0, limit: 10, since });
    expect(recent.changes.map((c) => c.tuple.user)).toEqual(['user:b']);
    expect(await read({ afterRevision: 0, afterIndex: 0, limit: 10, since: Date.now() + 60_000 })).toEqual({ changes: [], cursor: null });
    const read1 = await engine.readTuples({});
    expect(read1.tuples.map((t) => t.user)).toEqual(['user:a', 'user:b']);
    expect(read1.written_at![0]).toBeLessThan(since);
    expect(read1.written_at![1]).toBeGreaterThanOrEqual(since);
  });
});
