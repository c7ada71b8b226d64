/**
 * @module gateway/graphql/limits
 * GraphQL query limits (behaviour.md §1.2: --graphql-max-depth 15, --graphql-max-complexity 300,
 * --graphql-max-aliases 30). An operation over any limit is rejected at validation, before it executes.
 */
import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

export interface QueryLimits {
  maxDepth: number;
  maxComplexity: number;
  maxAliases: number;
}

interface Measure { depth: number; fields: number; aliases: number }

function measure(set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, seen: Set<string>): Measure {
  let depth = 0;
  let fields = 0;
  let aliases = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.name.value.startsWith('__')) continue; // introspection meta-fields are not counted
      fields += 1;
      if (sel.alias) aliases += 1;
      if (sel.selectionSet) {
        const inner = measure(sel.selectionSet, fragments, seen);
        depth = Math.max(depth, inner.depth + 1);
        fields += inner.fields;
        aliases += inner.aliases;
      } else {
        depth = Math.max(depth, 1);
      }
    } else {
      let inner: Measure | undefined;
      if (sel.kind === Kind.INLINE_FRAGMENT) inner = measure(sel.selectionSet, fragments, seen);
      else {
        const frag = fragments.get(sel.name.value);
        if (frag && !seen.has(frag.name.value)) {
          seen.add(frag.name.value);
          inner = measure(frag.selectionSet, fragments, seen);
          seen.delete(frag.name.value);
        }
      }
      if (inner) {
        depth = Math.max(depth, inner.depth);
        fields += inner.fields;
        aliases += inner.aliases;
      }
    }
  }
  return { depth, fields, aliases };
}

/**
 * Builds a graphql-js validation rule enforcing the limits. Complexity counts every selected field
 * once (a list field is not multiplied: list sizes are capped by the API itself).
 */
export function queryLimitsRule(limits: QueryLimits): (ctx: ValidationContext) => ASTVisitor {
  return (ctx) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of ctx.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    return {
      OperationDefinition(node) {
        const m = measure(node.selectionSet, fragments, new Set());
        const report = (msg: string): void => ctx.reportError(new GraphQLError(msg, { nodes: [node], extensions: { code: 'INVALID_ARGUMENT' } }));
        if (m.depth > limits.maxDepth) report(`query depth ${m.depth} exceeds the maximum of ${limits.maxDepth}`);
        if (m.fields > limits.maxComplexity) report(`query complexity ${m.fields} exceeds the maximum of ${limits.maxComplexity}`);
        if (m.aliases > limits.maxAliases) report(`query uses ${m.aliases} aliases, more than the maximum of ${limits.maxAliases}`);
      },
    };
  };
}
