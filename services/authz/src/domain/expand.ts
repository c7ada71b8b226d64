/** @module expand: one level of the OpenFGA userset tree for `object#relation` (OpenFGA Expand, UsersetTree JSON). */
import type { TupleIndex } from './tuple-index.ts';
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
 *
 * @returns `{root}` (OpenFGA `UsersetTree`)
 */
export function expand(ts: TypeSystem, index: TupleIndex, object: string, relation: string, rewrite: Rewrite): { root: UsersetTreeNode } {
  const name = `${object}#${relation}`;
  const node = (r: Rewrite): UsersetTreeNode => {
    switch (r.k) {
      case 'this': {
        const b = index.bucket(object, relation);
        return { name, leaf: { users: { users: [...b.users, ...b.usersets.keys()].sort() } } };
      }
      case 'computed':
        return { name, leaf: { computed: { userset: `${object}#${r.relation}` } } };
      case 'ttu': {
        const computed = [...index.bucket(object, r.tupleset).users]
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
