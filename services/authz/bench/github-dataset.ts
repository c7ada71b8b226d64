/** @module github-dataset: a deterministic GitHub-like authorization model and tuple set for benchmarks (reusable over HTTP/gRPC). */

/** A relationship tuple, wire shape. */
export interface BenchTuple {
  user: string;
  relation: string;
  object: string;
}

/** The GitHub-style model: nested teams, organizations, repositories with inherited roles and a block list. */
export const GITHUB_MODEL = `model
  schema 1.1
type user
type team
  relations
    define member: [user, team#member]
type organization
  relations
    define owner: [user]
    define admin: [user, team#member] or owner
    define member: [user, team#member] or admin
type repository
  relations
    define owner: [organization]
    define admin: [user, team#member] or admin from owner
    define maintainer: [user, team#member] or admin
    define writer: [user, team#member] or maintainer
    define reader: [user, team#member] or writer or member from owner
    define blocked: [user]
    define can_read: reader but not blocked
`;

/** Sizes of the generated dataset. */
export interface DatasetOptions {
  tuples: number;
  users: number;
  orgs: number;
  teamsPerOrg: number;
  reposPerOrg: number;
  seed: number;
}

export const DEFAULT_DATASET: DatasetOptions = { tuples: 200_000, users: 20_000, orgs: 100, teamsPerOrg: 20, reposPerOrg: 200, seed: 42 };

/** The generated data plus handles the benchmarks need. */
export interface Dataset {
  model: string;
  tuples: BenchTuple[];
  options: DatasetOptions;
  /** a user who is a member of 8 organizations, so can read 1,600 repositories */
  powerUser: string;
  /** user → organizations it belongs to (to sample checks that are likely allowed) */
  orgsOf: Map<string, string[]>;
}

/** mulberry32: a small seeded PRNG, so every run builds the same tuples. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds exactly `options.tuples` distinct tuples, deterministically from `options.seed`. */
export function generateGithubDataset(options: DatasetOptions = DEFAULT_DATASET): Dataset {
  const rnd = prng(options.seed);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const seen = new Set<string>();
  const tuples: BenchTuple[] = [];
  const add = (user: string, relation: string, object: string): void => {
    const k = `${object}#${relation}@${user}`;
    if (seen.has(k) || tuples.length >= options.tuples) return;
    seen.add(k);
    tuples.push({ user, relation, object });
  };
  const user = (i: number): string => `user:u${i}`;
  const org = (i: number): string => `organization:o${i}`;
  const team = (o: number, t: number): string => `team:o${o}-t${t}`;
  const repo = (o: number, r: number): string => `repository:o${o}-r${r}`;
  const orgsOf = new Map<string, string[]>();

  for (let o = 0; o < options.orgs; o++) {
    add(user(pick(options.users)), 'owner', org(o));
    for (let i = 0; i < 3; i++) add(user(pick(options.users)), 'admin', org(o));
    for (let t = 0; t < options.teamsPerOrg; t++) {
      if (t > 0 && rnd() < 0.3) add(`${team(o, pick(t))}#member`, 'member', team(o, t)); // nested teams
    }
    add(`${team(o, 0)}#member`, 'admin', org(o));
    for (let r = 0; r < options.reposPerOrg; r++) add(org(o), 'owner', repo(o, r));
  }
  const powerUser = 'user:power';
  for (let o = 0; o < 8; o++) add(powerUser, 'member', org(o * 7));
  for (let u = 0; u < options.users; u++) {
    const o = pick(options.orgs);
    add(user(u), 'member', org(o));
    orgsOf.set(user(u), [org(o)]);
    for (let k = 0; k < 3; k++) add(user(u), 'member', team(o, pick(options.teamsPerOrg)));
  }
  const roles = ['reader', 'writer', 'maintainer', 'admin'];
  for (let o = 0; o < options.orgs; o++) {
    for (let r = 0; r < options.reposPerOrg; r++) {
      add(`${team(o, pick(options.teamsPerOrg))}#member`, roles[pick(4)] as string, repo(o, r));
      if (rnd() < 0.05) add(user(pick(options.users)), 'blocked', repo(o, r));
    }
  }
  while (tuples.length < options.tuples) {
    const o = pick(options.orgs);
    add(user(pick(options.users)), roles[pick(4)] as string, repo(o, pick(options.reposPerOrg)));
  }
  return { model: GITHUB_MODEL, tuples, options, powerUser, orgsOf };
}
