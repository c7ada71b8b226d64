/**
 * @module drive-dataset
 * The drive-like model and dataset of the OpenFGA side-by-side bench and the in-process ListUsers bench:
 * users in nested groups, folders in a tree inheriting from their parent, documents from their folder.
 */
import { prng } from './github-dataset.ts';

/** A drive-like model: nested groups, folders inheriting from their parent folder, documents from their folder. */
export const DRIVE_MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or editor from parent
    define viewer: [user, group#member] or editor or viewer from parent
type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner or editor from parent
    define viewer: [user, group#member] or editor or viewer from parent
`;

export interface TupleKey { user: string; relation: string; object: string }

/** The dataset's sizes for `n` tuples, and the tuples themselves (deterministic, distinct, exactly `n`). */
export function driveDataset(n: number): { tuples: TupleKey[]; users: number; documents: number } {
  const rnd = prng(7);
  const pick = (k: number): number => Math.floor(rnd() * k);
  const users = Math.max(10, Math.floor(n / 10));
  const groups = Math.max(5, Math.floor(n / 200));
  const folders = Math.max(5, Math.floor(n / 40));
  const seen = new Set<string>();
  const tuples: TupleKey[] = [];
  const add = (user: string, relation: string, object: string): void => {
    const k = `${object}#${relation}@${user}`;
    if (tuples.length >= n || seen.has(k)) return;
    seen.add(k);
    tuples.push({ user, relation, object });
  };
  // groups: 30% nested in an earlier group (so membership chains go a few levels deep)
  for (let g = 1; g < groups; g++) if (rnd() < 0.3) add(`group:g${pick(g)}#member`, 'member', `group:g${g}`);
  // users: 3 groups each
  for (let u = 0; u < users; u++) for (let k = 0; k < 3; k++) add(`user:u${u}`, 'member', `group:g${pick(groups)}`);
  // folders: a tree of fan-out 8 (depth ≈ log8 folders), an owner and one group grant each
  for (let f = 0; f < folders; f++) {
    if (f > 0) add(`folder:f${Math.floor((f - 1) / 8)}`, 'parent', `folder:f${f}`);
    add(`user:u${pick(users)}`, 'owner', `folder:f${f}`);
    add(`group:g${pick(groups)}#member`, rnd() < 0.7 ? 'viewer' : 'editor', `folder:f${f}`);
  }
  // documents: a folder, an owner and a direct grant each, until n
  let documents = 0;
  while (tuples.length < n) {
    const d = `document:d${documents++}`;
    add(`folder:f${pick(folders)}`, 'parent', d);
    add(`user:u${pick(users)}`, 'owner', d);
    add(rnd() < 0.2 ? `group:g${pick(groups)}#member` : `user:u${pick(users)}`, rnd() < 0.7 ? 'viewer' : 'editor', d);
  }
  return { tuples, users, documents };
}
