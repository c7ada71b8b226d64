/** @module consistency.test: list objects, list users and batched checks agree with single checks on a generated GitHub-like dataset. */
import { describe, it, expect, beforeAll } from '@jest/globals';
import { createEngine } from './index.ts';
import type { Engine } from './index.ts';
import { createMemoryStore } from '../storage/memory.ts';
import { generateGithubDataset } from '../../bench/github-dataset.ts';

const OPTIONS = { tuples: 4000, users: 300, orgs: 4, teamsPerOrg: 5, reposPerOrg: 25, seed: 9 };
const REPOS = Array.from({ length: OPTIONS.orgs * OPTIONS.reposPerOrg }, (_, i) => `repository:o${Math.floor(i / OPTIONS.reposPerOrg)}-r${i % OPTIONS.reposPerOrg}`);
const RELATIONS = ['admin', 'maintainer', 'writer', 'reader', 'can_read', 'blocked'];

describe('engine consistency on a generated dataset', () => {
  let engine: Engine;
  beforeAll(async () => {
    const data = generateGithubDataset(OPTIONS);
    engine = createEngine({ store: createMemoryStore() });
    await engine.writeModel(data.model);
    for (let i = 0; i < data.tuples.length; i += 100) await engine.writeTuples(data.tuples.slice(i, i + 100));
  });

  async function allowedRepos(user: string, relation: string): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < REPOS.length; i += 100) {
      const results = await engine.check(user, REPOS.slice(i, i + 100).map((object) => ({ relation, object })));
      for (const r of results) if (r.allowed) out.push(r.object);
    }
    return out.sort();
  }

  it('list objects equals the repositories whose check is allowed', async () => {
    let nonEmpty = 0;
    for (let u = 0; u < 40; u++) {
      for (const relation of RELATIONS) {
        const expected = await allowedRepos(`user:u${u}`, relation);
        const { objects } = await engine.listPermissions(`user:u${u}`, { relation, object_type: 'repository' });
        expect({ user: u, relation, objects }).toEqual({ user: u, relation, objects: expected });
        if (expected.length > 0) nonEmpty++;
      }
    }
    expect(nonEmpty).toBeGreaterThan(40);
  });

  it('list users equals the users whose check is allowed', async () => {
    for (const object of REPOS.slice(0, 12)) {
      const expected: string[] = [];
      for (let u = 0; u < OPTIONS.users; u += 100) {
        const ids = Array.from({ length: 100 }, (_, k) => `user:u${u + k}`);
        for (const id of ids) {
          const [r] = await engine.check(id, [{ relation: 'can_read', object }]);
          if (r?.allowed) expected.push(id);
        }
      }
      const { users } = await engine.listUsers({ object, relation: 'can_read', user_type: 'user' });
      expect({ object, users: users.filter((x) => x !== 'user:power') }).toEqual({ object, users: expected.sort() });
    }
  });

  it('a batch answers exactly as single checks do', async () => {
    const checks = REPOS.slice(0, 50).flatMap((object) => [{ relation: 'can_read', object }, { relation: 'writer', object }]);
    for (let u = 0; u < 20; u++) {
      const batch = await engine.check(`user:u${u}`, checks);
      for (const [i, c] of checks.entries()) {
        const [single] = await engine.check(`user:u${u}`, [c]);
        expect({ u, c, allowed: batch[i]?.allowed }).toEqual({ u, c, allowed: single?.allowed });
      }
    }
  });
});
