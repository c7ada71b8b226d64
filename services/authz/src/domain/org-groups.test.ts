/** An organization's group tuples go with it (behaviour.md §6.1 delete_organization, §6.4 groups). */
import { describe, expect, it } from '@jest/globals';
import { createEngine } from './index.ts';
import { createMemoryStore } from '../storage/memory.ts';
import { deleteOrgGroupTuples } from './org-groups.ts';

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define viewer: [user, group#member]`;

describe('deleteOrgGroupTuples', () => {
  it('deletes the tuples naming a group of the org as object or subject, over several pages, and nothing else', async () => {
    const engine = createEngine({ store: createMemoryStore() });
    await engine.writeModel(MODEL);
    const doomed = Array.from({ length: 150 }, (_, i) => ({ user: `user:u${i}`, relation: 'member', object: 'group:org-a/eng' }));
    for (let i = 0; i < doomed.length; i += 100) await engine.writeTuples(doomed.slice(i, i + 100));
    const nested = [
      { user: 'group:org-a/eng#member', relation: 'member', object: 'group:org-b/all' },
      { user: 'group:org-a/eng#member', relation: 'viewer', object: 'doc:1' },
    ];
    const kept = [
      { user: 'user:u1', relation: 'member', object: 'group:org-b/all' },
      { user: 'user:u1', relation: 'member', object: 'group:org-ab/x' },
      { user: 'user:u2', relation: 'viewer', object: 'doc:1' },
    ];
    await engine.writeTuples([...nested, ...kept]);
    expect(await deleteOrgGroupTuples(engine, 'org-a')).toBe(152);
    const left = await engine.readTuples({ page_size: 100 });
    expect(left.tuples.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      [...kept].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    expect(await deleteOrgGroupTuples(engine, 'org-a')).toBe(0);
  });
});
