/** @module expand: one level of the OpenFGA userset tree for `object#relation` (OpenFGA Expand, UsersetTree JSON). */
import type { TupleIndex, TupleSource } from './tuple-index.ts';
import type { Rewrite, TypeSystem } from './type-system.ts';

/** A node of the OpenFGA userset tree, in OpenFGA's JSON shape. */
export interface UsersetTreeNode {
  name: string;
  leaf?:
    | { users: { users: string[] } }
    | { computed: { userset: string } }
    | { tupleToUserset: { tupleset: string; computed: Array<{ userset: string }> } };
  union?: { nodes: UsersetTreeNode[] };
  intersection?: { nodes: UsersetTreeNode[] };
  difference?: { base: UsersetTreeNode; subtract: UsersetTreeNode };
}

/**
 * Expands `object#relation` one level, as OpenFGA Expand does: direct users (sorted), computed
 * usersets and tuple-to-userset targets are leaves; rewrites become union/intersection/difference.
 * `ctx`, when given, holds the request's contextual tuples, counted as stored (OpenFGA Expand's
 * `contextual_tuples`).
 *
 * @returns `{root}` (OpenFGA `UsersetTree`)
 */
export function expand(ts: TypeSystem, index: TupleSource, object: string, relation: string, rewrite: Rewrite, ctx: TupleIndex | null = null): { root: UsersetTreeNode } {
  const name = `${object}#${relation}`;
  /** the users of `object#rel`, stored and contextual, each once */
  const usersOf = (rel: string, withUsersets: boolean): string[] => {
    const out = new Set<string>();
    for (const i of ctx ? [index, ctx] as TupleSource[] : [index]) {
      const b = i.bucket(object, rel);
      for (const u of b.users) out.add(u);
      if (withUsersets) for (const u of b.usersets.keys()) out.add(u);
    }
    return [...out];
  };
  const node = (r: Rewrite): UsersetTreeNode => {
    switch (r.k) {
      case 'this': {
        return { name, leaf: { users: { users: usersOf(relation, true).sort() } } };
      }
      case 'computed':
        return { name, leaf: { computed: { userset: `${object}#${r.relation}` } } };
      case 'ttu': {
        const computed = usersOf(r.tupleset, false)
          .filter((p) => !p.endsWith(':*') && ts.relation(p.slice(0, p.indexOf(':')), r.computed) !== undefined)
          .sort()
          .map((p) => ({ userset: `${p}#${r.computed}` }));
        return { name, leaf: { tupleToUserset: { tupleset: `${object}#${r.tupleset}`, computed } } };
      }
      case 'union':
        return { name, union: { nodes: r.children.map(node) } };
      case 'intersection':
        return { name, intersection: { nodes: r.children.map(node) } };
      case 'difference':
        return { name, difference: { base: node(r.base), subtract: node(r.subtract) } };
    }
  };
  return { root: node(rewrite) };
}
