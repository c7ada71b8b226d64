/**
 * @module authz/test/openfga/differential
 * Seeded generation of OpenFGA models, tuple sets and queries for the differential test of the
 * embedded engine against a real OpenFGA server (issue 21, "A differential test"). Every operator
 * appears: direct types, wildcards, usersets, computed usersets, tuple-to-userset (recursive too),
 * union, intersection, but-not, cycles (nested groups, folders that are each other's parent,
 * relations that name each other) and a CEL condition. Same seed, same case.
 */
import { prng } from '../../bench/github-dataset.ts';
import type { Tuple } from '../../src/domain/index.ts';

/** One generated case: a model, candidate tuples (the engine keeps those the model allows) and the query sets. */
export interface DiffCase {
  seed: number;
  dsl: string;
  tuples: Tuple[];
  subjects: string[];
  objects: Record<string, string[]>;
  /** relations per type, for checks and lists */
  relations: Record<string, string[]>;
  /** the condition context lists and half the checks carry */
  context: Record<string, unknown>;
}

const USERS = ['user:u0', 'user:u1', 'user:u2', 'user:u3'];
const GROUPS = ['group:g0', 'group:g1', 'group:g2'];
const FOLDERS = ['folder:f0', 'folder:f1', 'folder:f2'];
const DOCS = ['doc:d0', 'doc:d1', 'doc:d2', 'doc:d3'];

/** Builds case `seed`. */
export function generateCase(seed: number): DiffCase {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const chance = (p: number): boolean => rnd() < p;

  // the doc relations r0..r2 are random expressions over these operands (ri may name rj: cycles)
  const operands = ['owner', 'editor', 'blocked', 'viewer from parent', 'inherited from parent', 'r0', 'r1', 'r2', 'cond_viewer'];
  const expr = (self: string): string => {
    const others = operands.filter((o) => o !== self);
    const a = pick(others);
    const b = pick(others.filter((o) => o !== a));
    const c = pick(others.filter((o) => o !== a && o !== b));
    const direct = chance(0.5) ? `${pick(['[user]', '[user, user:*]', '[user, group#member]', '[group#member]'])} ` : '';
    const lead = direct ? `${direct}${pick(['or', 'and', 'but not'])} ` : '';
    switch (Math.floor(rnd() * 6)) {
      case 0: return `${lead}${a}`;
      case 1: return `${lead}${a} or ${b}`;
      case 2: return direct ? `${direct}and ${a}` : `${a} and ${b}`;
      case 3: return direct ? `${direct}but not ${a}` : `${a} but not ${b}`;
      case 4: return direct ? `${direct}or (${a} and ${b})` : `(${a} or ${b}) and ${c}`;
      default: return direct ? `${direct}but not (${a} or ${b})` : `${a} but not (${b} and ${c})`;
    }
  };
  const dsl = `model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define owner: [user, group#member]
    define parent: [folder]
    define viewer: [user, user:*, group#member] or owner
    define inherited: viewer or inherited from parent
type doc
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner
    define blocked: [user, group#member]
    define cond_viewer: [user with in_tenant, group#member with in_tenant]
    define r0: ${expr('r0')}
    define r1: ${expr('r1')}
    define r2: ${expr('r2')}

condition in_tenant(tenant: string, request_tenant: string) {
  tenant == request_tenant
}
`;
  const tuples: Tuple[] = [];
  const add = (user: string, relation: string, object: string, condition?: Tuple['condition']): void => {
    tuples.push({ user, relation, object, ...(condition ? { condition } : {}) });
  };
  for (const g of GROUPS) {
    for (const u of USERS) if (chance(0.35)) add(u, 'member', g);
    if (chance(0.15)) add('user:*', 'member', g);
    for (const h of GROUPS) if (h !== g && chance(0.3)) add(`${h}#member`, 'member', g); // cycles when both ways
  }
  for (const f of FOLDERS) {
    for (const o of FOLDERS) if (o !== f && chance(0.3)) add(o, 'parent', f); // parent cycles
    if (chance(0.5)) add(pick(USERS), 'owner', f);
    if (chance(0.4)) add(`${pick(GROUPS)}#member`, 'viewer', f);
    if (chance(0.3)) add(pick(USERS), 'viewer', f);
    if (chance(0.1)) add('user:*', 'viewer', f);
  }
  for (const d of DOCS) {
    if (chance(0.7)) add(pick(FOLDERS), 'parent', d);
    if (chance(0.5)) add(pick(USERS), 'owner', d);
    if (chance(0.5)) add(pick(USERS), 'editor', d);
    if (chance(0.4)) add(`${pick(GROUPS)}#member`, 'editor', d);
    if (chance(0.4)) add(pick(USERS), 'blocked', d);
    if (chance(0.2)) add(`${pick(GROUPS)}#member`, 'blocked', d);
    if (chance(0.5)) add(pick(USERS), 'cond_viewer', d, { name: 'in_tenant', context: { tenant: pick(['a', 'b']) } });
    if (chance(0.3)) add(`${pick(GROUPS)}#member`, 'cond_viewer', d, { name: 'in_tenant', context: { tenant: pick(['a', 'b']) } });
    for (const r of ['r0', 'r1', 'r2']) {
      if (chance(0.4)) add(pick(USERS), r, d);
      if (chance(0.2)) add('user:*', r, d);
      if (chance(0.2)) add(`${pick(GROUPS)}#member`, r, d);
    }
  }
  return {
    seed,
    dsl,
    tuples,
    subjects: [...USERS, 'user:*', 'group:g0#member', 'group:g1#member'],
    objects: { group: GROUPS, folder: FOLDERS, doc: DOCS },
    relations: { group: ['member'], folder: ['inherited', 'owner', 'viewer'], doc: ['blocked', 'cond_viewer', 'editor', 'owner', 'r0', 'r1', 'r2'] },
    context: { request_tenant: 'a' },
  };
}
