import { describe, it, expect } from '@jest/globals';
import { buildSchema, getIntrospectionQuery, Kind, OperationTypeNode, parse, specifiedRules, validate, type DocumentNode, type SelectionNode } from 'graphql';
import { findLimitViolation, limitMessage, queryLimitsRule, type QueryLimits } from './limits.ts';

// Node is recursive, so any depth is valid against the schema; Mutation.signup has a side effect in real life
const schema = buildSchema(`
  type Query { node: Node meta: Meta }
  type Mutation { signup(email: String!): Node }
  type Node { id: ID child: Node name: String }
  type Meta { version: String }
`);
const LIMITS: QueryLimits = { maxDepth: 15, maxComplexity: 300, maxAliases: 30 };

/** Validates as Apollo Server does: graphql-js's rules, then ours, in one parallel walk. */
const check = (query: string, limits: QueryLimits = LIMITS) => validate(schema, parse(query), [...specifiedRules, queryLimitsRule(limits)]);
const messages = (query: string, limits?: QueryLimits) => check(query, limits).map((e) => e.message);
const nested = (levels: number, leaf = 'id'): string => {
  let s = leaf;
  for (let i = 1; i < levels; i++) s = `child { ${s} }`;
  return s;
};
const aliased = (n: number, field = 'meta { version }'): string => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');
/** F0 spreads F1 twice, F1 spreads F2 twice, …: 2^levels expansions */
const fanOut = (levels: number): string => {
  const defs = Array.from({ length: levels }, (_, i) => `fragment F${i} on Meta { ...F${i + 1} ...F${i + 1} }`);
  return `{ meta { ...F0 } } ${defs.join(' ')} fragment F${levels} on Meta { version }`;
};
const DEPTH = limitMessage('depth', LIMITS);
const COMPLEXITY = limitMessage('complexity', LIMITS);
const ALIASES = limitMessage('aliases', LIMITS);

describe('query limits (behaviour.md §1.2)', () => {
  it('accepts a document exactly at each limit', () => {
    expect(messages(`{ node { ${nested(14)} } }`)).toEqual([]); // depth 15
    expect(messages(`{ ${aliased(30)} }`)).toEqual([]); // 30 aliases, complexity 60
    expect(messages(`{ meta { ${'version '.repeat(299)} } }`)).toEqual([]); // complexity 300
  });

  it('refuses depth 16, 31 aliases and complexity 301 with INVALID_ARGUMENT', () => {
    const deep = check(`{ node { ${nested(15)} } }`);
    expect(deep.map((e) => [e.message, e.extensions.code])).toEqual([[DEPTH, 'INVALID_ARGUMENT']]);
    expect(deep[0]!.locations).toEqual([{ line: 1, column: 1 }]);
    expect(messages(`{ ${aliased(31)} }`)).toEqual([ALIASES]);
    expect(messages(`{ meta { ${'version '.repeat(300)} } }`)).toEqual([COMPLEXITY]);
  });

  it('refuses a 50-level query and a mutation aliased 200 times', () => {
    expect(messages(`{ node { ${nested(49)} } }`)).toEqual([DEPTH]);
    expect(messages(`mutation { ${aliased(200, 'signup(email: "a@example.com") { id }')} }`)).toEqual([ALIASES]);
    expect(messages(`{ ${aliased(200, '__typename')} }`)).toEqual([ALIASES]);
  });

  it('counts meta-fields like any field (introspection is not a way around the limits)', () => {
    let ofType = 'name';
    for (let i = 0; i < 50; i++) ofType = `ofType { ${ofType} }`;
    expect(messages(`{ __type(name: "Node") { ${ofType} } }`)).toEqual([DEPTH]);
    expect(messages(`{ ${aliased(31, '__type(name: "Node") { name }')} }`)).toEqual([ALIASES]);
  });

  it('passes the introspection query GraphiQL sends (depth 15, 240 selections) at the defaults', () => {
    const query = getIntrospectionQuery({ descriptions: true, schemaDescription: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true, oneOf: true });
    expect(messages(query)).toEqual([]);
    expect(messages(query, { ...LIMITS, maxDepth: 14 })).toEqual([limitMessage('depth', { ...LIMITS, maxDepth: 14 })]);
  });

  it('counts a fragment each time it is spread, through named and inline fragments', () => {
    const frag = `fragment Ten on Meta { ${aliased(10, 'version')} }`;
    expect(messages(`{ meta { ...Ten ...Ten ...Ten } } ${frag}`)).toEqual([]);
    expect(messages(`{ meta { ...Ten ...Ten ...Ten ... on Meta { ...Ten } } } ${frag}`)).toEqual([ALIASES]);
    expect(messages(`{ node { ...Deep } } fragment Deep on Node { ${nested(15)} }`)).toEqual([DEPTH]);
    expect(messages(`{ node { ... on Node { ${nested(14)} } } }`)).toEqual([]); // inline fragments add no level
  });

  it('refuses exponential fragment fan-out quickly, without expanding it', () => {
    const started = performance.now();
    expect(messages(fanOut(60))).toEqual([COMPLEXITY]); // 2^60 expansions
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses self-recursive and mutually recursive fragments cleanly', () => {
    expect(messages('{ meta { ...F } } fragment F on Meta { version ...F }')).toEqual(['Cannot spread fragment "F" within itself.']);
    // graphql-js reports each spread that closes the cycle
    const distinct = (q: string) => [...new Set(messages(q))];
    expect(distinct('{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { child { ...A ...A } }'))
      .toEqual(['Cannot spread fragment "A" within itself via "B".']);
    // a cycle that also fans out is still bounded by the walk
    expect(distinct('{ node { ...A } } fragment A on Node { child { ...A ...A ...A ...A } }')).toEqual(['Cannot spread fragment "A" within itself.']);
  });

  it('survives nesting and fragment chains far beyond the limits without overflowing the stack', () => {
    // 3,000 nested inline fragments, built as an AST: graphql-js's recursive-descent parser itself needs
    // about as much stack as this depth leaves, so parsing it here made the test depend on frame sizes
    const name = (value: string) => ({ kind: Kind.NAME, value }) as const;
    let inline: SelectionNode = { kind: Kind.FIELD, name: name('version') };
    for (let i = 0; i < 3000; i++) {
      inline = { kind: Kind.INLINE_FRAGMENT, typeCondition: { kind: Kind.NAMED_TYPE, name: name('Meta') }, selectionSet: { kind: Kind.SELECTION_SET, selections: [inline] } };
    }
    const deep: DocumentNode = { kind: Kind.DOCUMENT, definitions: [{
      kind: Kind.OPERATION_DEFINITION, operation: OperationTypeNode.QUERY,
      selectionSet: { kind: Kind.SELECTION_SET, selections: [{ kind: Kind.FIELD, name: name('meta'), selectionSet: { kind: Kind.SELECTION_SET, selections: [inline] } }] },
    }] };
    expect(validate(schema, deep, [...specifiedRules, queryLimitsRule(LIMITS)]).map((e) => e.message)).toEqual([COMPLEXITY]);
    const chain = Array.from({ length: 20_000 }, (_, i) => `fragment C${i} on Meta { ...C${i + 1} }`).join(' ');
    expect(messages(`{ meta { ...C0 } } ${chain} fragment C20000 on Meta { version }`)).toEqual([COMPLEXITY]);
  });

  it('skips graphql-js\'s own rules on a refused document (20,000 copies of one field)', () => {
    const started = performance.now();
    expect(messages(`{ meta { ${'version '.repeat(20_000)} nope } }`)).toEqual([COMPLEXITY]); // no "Cannot query field nope"
    expect(performance.now() - started).toBeLessThan(1000);
    // an accepted document still gets every graphql-js rule
    expect(messages('{ meta { nope } }')).toEqual(['Cannot query field "nope" on type "Meta".']);
  });

  it('measures the whole document: every operation and unused fragments share one budget', () => {
    const half = `meta { ${'version '.repeat(159)} }`; // 160 selections
    expect(messages(`query A { ${half} } query B { __typename }`)).toEqual([]);
    expect(messages(`query A { ${half} } query B { ${half} }`)).toEqual([COMPLEXITY]);
    const unused = `fragment Unused on Meta { ${'version '.repeat(301)} }`;
    expect(findLimitViolation(parse(`{ meta { version } } ${unused}`), LIMITS)).toMatchObject({ limit: 'complexity', definition: { kind: 'FragmentDefinition' } });
  });
});
