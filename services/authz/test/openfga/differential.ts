/**
 * @module authz/test/openfga/differential
 * Seeded generation of OpenFGA models, tuple sets and queries for the differential test of the
 * embedded engine against a real OpenFGA server (issue 21, "A differential test"). Every operator
 * appears: direct types, wildcards, usersets, computed usersets, tuple-to-userset (recursive too),
 * union, intersection, but-not, cycles (nested groups, folders that are each other's parent,
 * relations that name each other) and CEL conditions (issue 36 §3): each case draws its conditions from
 * {@link CONDITIONS} (parameters of type int, double, string, bool, list, map and timestamp), puts them on
 * direct relations, on usersets and on a tupleset, gives conditioned tuples part of their parameters, and
 * asks with request contexts that give the rest, leave some out, or give values of the wrong type (a JSON
 * null, an int that is not whole, a double beyond float64 or not exactly a float64 in a string), with and
 * without conditioned contextual tuples. Same seed, same case.
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
  /** the condition contexts checks are asked with: none, every parameter, and (when there) some left out */
  contexts: Array<Record<string, unknown>>;
  /** the contexts lists are asked with, in turn */
  listContexts: Array<Record<string, unknown>>;
  /** conditioned tuples, none stored, sent as contextual tuples with a second round of checks and lists */
  contextual: Tuple[];
}

/** A condition the generator may declare: its DSL parameters, its expression, and values for each parameter. */
interface ConditionSpec {
  name: string;
  params: Record<string, string>;
  expression: string;
}

/**
 * The conditions cases draw from. Every parameter type of the DSL but `uint`, `duration` and `ipaddress`
 * (covered by the YAML conformance data) appears; `either` names two parameters of which the expression may
 * need only one, so a context that leaves one out is refused whatever the other's value.
 */
export const CONDITIONS: readonly ConditionSpec[] = [
  { name: 'in_tenant', params: { tenant: 'string', request_tenant: 'string' }, expression: 'tenant == request_tenant' },
  { name: 'level_ok', params: { level: 'int', min_level: 'int' }, expression: 'level >= min_level' },
  { name: 'either', params: { x: 'int', y: 'int' }, expression: 'x < 100 || y < 50' },
  { name: 'score_ok', params: { score: 'double' }, expression: 'score > 0.5' },
  { name: 'enabled', params: { on: 'bool' }, expression: 'on' },
  { name: 'listed', params: { who: 'string', allowed: 'list<string>' }, expression: 'who in allowed' },
  { name: 'quota', params: { quotas: 'map<int>', key: 'string' }, expression: 'key in quotas && quotas[key] > 0' },
  { name: 'before', params: { now: 'timestamp', until: 'timestamp' }, expression: 'now < until' },
];

/** Well-typed values per parameter type (a double in a string that is exactly a float64 included). */
const VALUES: Record<string, readonly unknown[]> = {
  string: ['a', 'b'],
  int: [5, 50, 150, '20'],
  double: [0.25, 1.5, -2, '1.5'],
  bool: [true, false],
  'list<string>': [['a'], ['a', 'b'], []],
  'map<int>': [{ a: 1 }, { a: 0, b: 2 }, {}],
  timestamp: ['2024-01-01T00:00:00Z', '2025-06-01T12:00:00Z', '2030-01-01T00:00:00Z'],
};

/**
 * Values OpenFGA refuses for each type: of another type, an int that is not whole, a double beyond float64
 * or not exactly a float64 when read from a string at 64 bits, a list or map with an item of another type.
 */
const WRONG: Record<string, readonly unknown[]> = {
  string: [7, true],
  int: [7.5, 'x', '1.5'],
  double: ['0.1', '1.79769313486231570814527423731704356798070e+309', '-1e-400', 'x'],
  bool: ['true', 1],
  'list<string>': [['b', 3], 'a'],
  'map<int>': [{ a: 'x' }, [1]],
  timestamp: ['yesterday', 1700000000],
};

const USERS = ['user:u0', 'user:u1', 'user:u2', 'user:u3'];
const GROUPS = ['group:g0', 'group:g1', 'group:g2'];
const FOLDERS = ['folder:f0', 'folder:f1', 'folder:f2'];
const DOCS = ['doc:d0', 'doc:d1', 'doc:d2', 'doc:d3'];

/**
 * The seeded draws both generators use: `pick` and `chance` over one PRNG, and `expr`, a random relation
 * expression over the doc's operands for relation `self` (`ri` may name `rj`: cycles).
 */
function draws(seed: number): {
  pick: <T>(xs: readonly T[]) => T;
  chance: (p: number) => boolean;
  expr: (self: string) => string;
} {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const chance = (p: number): boolean => rnd() < p;

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
  return { pick, chance, expr };
}

/** The subjects, objects and relations every case is asked about. */
const QUERIES: Pick<DiffCase, 'subjects' | 'objects' | 'relations'> = {
  subjects: [...USERS, 'user:*', 'group:g0#member', 'group:g1#member'],
  objects: { group: GROUPS, folder: FOLDERS, doc: DOCS },
  relations: { group: ['member'], folder: ['inherited', 'owner', 'viewer'], doc: ['blocked', 'cond_viewer', 'editor', 'owner', 'r0', 'r1', 'r2'] },
};

/** The model's first lines, the same in both generators: users, nested groups, and folders up to their viewer. */
const MODEL_HEAD = `model
  schema 1.1
type user
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define owner: [user, group#member]
    define parent: [folder]`;

/**
 * The group and folder tuples both generators draw: group memberships (users, `user:*`, groups nested in each
 * other: cycles when both ways), folder parents (cycles), owners and viewers; with `folderCondition`, also a
 * conditioned folder viewer.
 */
function addGroupAndFolderTuples(
  add: (user: string, relation: string, object: string, condition?: Tuple['condition']) => void,
  pick: <T>(xs: readonly T[]) => T,
  chance: (p: number) => boolean,
  folderCondition?: () => NonNullable<Tuple['condition']>,
): void {
  for (const g of GROUPS) {
    for (const u of USERS) if (chance(0.35)) add(u, 'member', g);
    if (chance(0.15)) add('user:*', 'member', g);
    for (const h of GROUPS) if (h !== g && chance(0.3)) add(`${h}#member`, 'member', g);
  }
  for (const f of FOLDERS) {
    for (const o of FOLDERS) if (o !== f && chance(0.3)) add(o, 'parent', f);
    if (chance(0.5)) add(pick(USERS), 'owner', f);
    if (chance(0.4)) add(`${pick(GROUPS)}#member`, 'viewer', f);
    if (chance(0.3)) add(pick(USERS), 'viewer', f);
    if (folderCondition && chance(0.3)) add(pick(USERS), 'viewer', f, folderCondition());
    if (chance(0.1)) add('user:*', 'viewer', f);
  }
}

/**
 * Builds conditioned case `seed` (`DIFF_CONDITIONS=1`): conditions drawn from {@link CONDITIONS} on direct
 * relations, usersets and a tupleset; checks asked with no context, every parameter, some left out, and with
 * conditioned contextual tuples; lists with those contexts in turn.
 */
export function generateConditionedCase(seed: number): DiffCase {
  const { pick, chance, expr } = draws(seed);
  // four condition slots: a user's and a userset's direct tuples, a folder viewer, the doc's parent tupleset
  const pool = [...CONDITIONS];
  const conds = [0, 1, 2, 3].map(() => pick(pool));
  const declared = [...new Set(conds)];
  const [cUser, cGroup, cFolder, cParent] = conds as [ConditionSpec, ConditionSpec, ConditionSpec, ConditionSpec];
  const value = (type: string): unknown => (chance(0.03) ? null : chance(0.08) ? pick(WRONG[type]!) : pick(VALUES[type]!));
  /** A context for condition `c`: each parameter given with probability `p`. */
  const partial = (c: ConditionSpec, p: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [name, type] of Object.entries(c.params)) if (chance(p)) out[name] = value(type);
    return out;
  };
  const conditionOf = (c: ConditionSpec): NonNullable<Tuple['condition']> => ({ name: c.name, context: partial(c, 0.4) });
  const dsl = `${MODEL_HEAD}
    define viewer: [user, user:*, group#member, user with ${cFolder.name}] or owner
    define inherited: viewer or inherited from parent
type doc
  relations
    define parent: [folder, folder with ${cParent.name}]
    define owner: [user]
    define editor: [user, group#member] or owner
    define blocked: [user, group#member]
    define cond_viewer: [user with ${cUser.name}, group#member with ${cGroup.name}]
    define r0: ${expr('r0')}
    define r1: ${expr('r1')}
    define r2: ${expr('r2')}
${declared.map((c) => `
condition ${c.name}(${Object.entries(c.params).map(([n, t]) => `${n}: ${t}`).join(', ')}) {
  ${c.expression}
}`).join('\n')}
`;
  const tuples: Tuple[] = [];
  // one tuple per key: a key drawn again (with or without a condition) keeps the first (OpenFGA refuses a
  // write that holds one key twice)
  const stored = new Set<string>();
  const add = (user: string, relation: string, object: string, condition?: Tuple['condition']): void => {
    const key = `${object}#${relation}@${user}`;
    if (stored.has(key)) return;
    stored.add(key);
    tuples.push({ user, relation, object, ...(condition ? { condition } : {}) });
  };
  addGroupAndFolderTuples(add, pick, chance, () => conditionOf(cFolder));
  for (const d of DOCS) {
    if (chance(0.5)) add(pick(FOLDERS), 'parent', d);
    if (chance(0.3)) add(pick(FOLDERS), 'parent', d, conditionOf(cParent));
    if (chance(0.5)) add(pick(USERS), 'owner', d);
    if (chance(0.5)) add(pick(USERS), 'editor', d);
    if (chance(0.4)) add(`${pick(GROUPS)}#member`, 'editor', d);
    if (chance(0.4)) add(pick(USERS), 'blocked', d);
    if (chance(0.2)) add(`${pick(GROUPS)}#member`, 'blocked', d);
    if (chance(0.5)) add(pick(USERS), 'cond_viewer', d, conditionOf(cUser));
    if (chance(0.3)) add(`${pick(GROUPS)}#member`, 'cond_viewer', d, conditionOf(cGroup));
    for (const r of ['r0', 'r1', 'r2']) {
      if (chance(0.4)) add(pick(USERS), r, d);
      if (chance(0.2)) add('user:*', r, d);
      if (chance(0.2)) add(`${pick(GROUPS)}#member`, r, d);
    }
  }
  // request contexts: every declared parameter (values as drawn), and most of them (some left out)
  const full: Record<string, unknown> = {};
  const most: Record<string, unknown> = {};
  for (const c of declared) {
    for (const [name, type] of Object.entries(c.params)) {
      full[name] = value(type);
      if (chance(0.7)) most[name] = value(type);
    }
  }
  // contextual tuples: conditioned, keys no stored tuple has (OpenFGA and the engine would each pick one)
  const contextual: Tuple[] = [];
  const addContextual = (user: string, relation: string, object: string, c: ConditionSpec): void => {
    const key = `${object}#${relation}@${user}`;
    if (stored.has(key)) return;
    stored.add(key);
    contextual.push({ user, relation, object, condition: conditionOf(c) });
  };
  for (let i = 0; i < 3; i++) {
    addContextual(pick(USERS), 'cond_viewer', pick(DOCS), cUser);
    if (chance(0.5)) addContextual(`${pick(GROUPS)}#member`, 'cond_viewer', pick(DOCS), cGroup);
    if (chance(0.5)) addContextual(pick(FOLDERS), 'parent', pick(DOCS), cParent);
  }
  return {
    seed,
    dsl,
    tuples,
    ...QUERIES,
    contexts: [{}, full, most],
    listContexts: [{}, full, most],
    contextual,
  };
}

/**
 * Builds case `seed` of the default run: one condition (`in_tenant`, on `cond_viewer`), checks asked without and
 * with the request context that gives its parameter, lists with it.
 */
export function generateCase(seed: number): DiffCase {
  const { pick, chance, expr } = draws(seed);
  const dsl = `${MODEL_HEAD}
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
  addGroupAndFolderTuples(add, pick, chance);
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
    ...QUERIES,
    contexts: [{}, { request_tenant: 'a' }],
    listContexts: [{ request_tenant: 'a' }],
    contextual: [],
  };
}
