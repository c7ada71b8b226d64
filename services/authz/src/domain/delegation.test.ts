/** perms(agent) ∩ perms(user) (issue 34 §3): the intersection of check batches and permission lists, and the `type agent` convention. */
import { describe, expect, it } from '@jest/globals';
import { agentSubject, declaresAgentType, intersectChecks, intersectPermissions } from './delegation.ts';

describe('delegated permissions', () => {
  it('finds type agent in a model, and nowhere else', () => {
    expect(declaresAgentType('model\n  schema 1.1\ntype user\ntype agent\ntype doc\n  relations\n    define viewer: [user, agent]\n')).toBe(true);
    expect(declaresAgentType('model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define agent: [user]\n')).toBe(false);
    expect(declaresAgentType('')).toBe(false);
    expect(declaresAgentType('not a model')).toBe(false);
    expect(agentSubject('c1')).toBe('agent:c1');
  });

  it('allows a check only when both the user and the agent are allowed', () => {
    const r = (allowed: boolean[]) => allowed.map((a, i) => ({ relation: 'viewer', object: `doc:${i}`, allowed: a }));
    expect(intersectChecks(r([true, true, false, false]), r([true, false, true, false]))).toEqual(r([true, false, false, false]));
    expect(() => intersectChecks(r([true]), r([]))).toThrow();
  });

  it('lists what both hold, in the user\'s order; truncated when either list was', () => {
    const list = (entries: Array<[string, string]>, truncated = false) => ({
      objects: [...new Set(entries.map(([o]) => o))], permissions: entries.map(([object, relation]) => ({ object, relation })), truncated,
    });
    const user = list([['doc:1', 'editor'], ['doc:1', 'viewer'], ['doc:2', 'viewer'], ['folder:1', 'viewer']]);
    const agent = list([['doc:1', 'viewer'], ['doc:2', 'editor'], ['folder:1', 'viewer']], true);
    expect(intersectPermissions(user, agent)).toEqual({ ...list([['doc:1', 'viewer'], ['folder:1', 'viewer']]), truncated: true });
    expect(intersectPermissions(user, list([]))).toEqual(list([]));
  });
});
