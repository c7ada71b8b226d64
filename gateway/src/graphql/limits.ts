/**
 * @module gateway/graphql/limits
 * GraphQL query limits (behaviour.md §1.2; graphql.md §1.1 "Query limits"): `--graphql-max-depth` 15,
 * `--graphql-max-complexity` 300, `--graphql-max-aliases` 30. A document over any limit is rejected at
 * validation, before graphql-js's own rules look at it and before anything executes.
 */
import {
  GraphQLError, Kind,
  type ASTVisitor, type DocumentNode, type ExecutableDefinitionNode, type FragmentDefinitionNode,
  type SelectionSetNode, type ValidationContext,
} from 'graphql';

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  maxAliases: number;
}

export type QueryLimit = 'depth' | 'complexity' | 'aliases';

/** The first limit a document passes, and the operation or fragment definition where it did. */
export interface LimitViolation {
  limit: QueryLimit;
  definition: ExecutableDefinitionNode;
}

/** The refusal messages (graphql.md §1.2: `extensions.code` INVALID_ARGUMENT, a GraphQL-style message). */
export const limitMessage = (limit: QueryLimit, limits: QueryLimits): string => ({
  depth: `query depth exceeds the maximum of ${limits.maxDepth}`,
  complexity: `query complexity exceeds the maximum of ${limits.maxComplexity}`,
  aliases: `query uses more than the maximum of ${limits.maxAliases} aliases`,
})[limit];

interface Walk {
  limits: QueryLimits;
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** names of the fragments spread anywhere in the walk */
  spread: Set<string>;
  /** fragments being expanded on the current path: a spread of one of them is a cycle and is not expanded */
  path: Set<string>;
  complexity: number;
  aliases: number;
}

/** Walks one selection set whose fields sit at `level`; returns the limit passed, or null. */
function walk(set: SelectionSetNode, level: number, w: Walk): QueryLimit | null {
  for (const sel of set.selections) {
    // every selection costs one, so the walk visits at most maxComplexity + 1 nodes however the document
    // nests or fans out fragments, and recurses at most that deep
    if (++w.complexity > w.limits.maxComplexity) return 'complexity';
    let inner: QueryLimit | null = null;
    if (sel.kind === Kind.FIELD) {
      if (level > w.limits.maxDepth) return 'depth';
      if (sel.alias && ++w.aliases > w.limits.maxAliases) return 'aliases';
      if (sel.selectionSet) inner = walk(sel.selectionSet, level + 1, w);
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      inner = walk(sel.selectionSet, level, w);
    } else {
      const name = sel.name.value;
      const fragment = w.fragments.get(name);
      w.spread.add(name);
      if (fragment && !w.path.has(name)) {
        w.path.add(name);
        inner = walk(fragment.selectionSet, level, w);
        w.path.delete(name);
      }
    }
    if (inner) return inner;
  }
  return null;
}

/**
 * Measures a whole document against the limits and returns the first one it passes, or null.
 * - depth: field nesting, `{ a { b } }` is 2; inline fragments and fragment spreads add no level.
 * - complexity: selections (fields, inline fragments and fragment spreads), a fragment's selections
 *   counted each time it is spread, summed over every operation of the document and every fragment
 *   no operation spreads (graphql-js validates those too).
 * - aliases: aliased fields, counted like complexity.
 * Meta-fields (`__typename`, `__schema`, `__type`) count like any field. A cyclic spread is not
 * expanded: graphql-js's NoFragmentCyclesRule refuses the document afterwards. The walk stops at the
 * first limit passed, so it costs O(maxComplexity) whatever the document.
 */
export function findLimitViolation(document: DocumentNode, limits: QueryLimits): LimitViolation | null {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(def.name.value)) fragments.set(def.name.value, def);
  }
  const w: Walk = { limits, fragments, spread: new Set(), path: new Set(), complexity: 0, aliases: 0 };
  const check = (definition: ExecutableDefinitionNode): LimitViolation | null => {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) w.path.add(definition.name.value);
    const limit = walk(definition.selectionSet, 1, w);
    w.path.clear();
    return limit ? { limit, definition } : null;
  };
  for (const def of document.definitions) {
    const found = def.kind === Kind.OPERATION_DEFINITION ? check(def) : null;
    if (found) return found;
  }
  for (const fragment of fragments.values()) {
    const found = w.spread.has(fragment.name.value) ? null : check(fragment);
    if (found) return found;
  }
  return null;
}

/**
 * A graphql-js validation rule enforcing the limits on the whole document, at its root.
 * @returns a rule whose refusal is one GraphQLError with `extensions.code` INVALID_ARGUMENT (graphql.md §1.2)
 */
export function queryLimitsRule(limits: QueryLimits): (ctx: ValidationContext) => ASTVisitor {
  return (ctx) => ({
    Document(node) {
      const found = findLimitViolation(node, limits);
      if (!found) return undefined;
      ctx.reportError(new GraphQLError(limitMessage(found.limit, limits), { nodes: [found.definition], extensions: { code: 'INVALID_ARGUMENT' } }));
      // graphql-js runs every rule in one parallel walk. A `null` from an enter hook deletes the node from
      // that walk (graphql `visit`: "null: delete this node"), so no rule looks inside a refused document.
      // Without this, OverlappingFieldsCanBeMergedRule compares fields pairwise: 20,000 copies of one field
      // (160 KB) held the event loop for about 35 s, whatever this rule reported.
      return null;
    },
  });
}
