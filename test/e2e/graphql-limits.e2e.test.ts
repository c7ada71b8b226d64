/**
 * @module test/e2e/graphql-limits
 * The GraphQL query limits at a running gateway (behaviour.md §1.2; graphql.md §1.1 "Query limits",
 * §1.2): documents over `--graphql-max-depth` 15, `--graphql-max-complexity` 300 or
 * `--graphql-max-aliases` 30 are refused with HTTP 200 and INVALID_ARGUMENT before anything executes,
 * introspection included; documents at the limits run; cyclic fragments, fragment fan-out and field
 * floods are refused quickly; batched bodies are refused. All-in-one and split mode.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { getIntrospectionQuery } from 'graphql';
import { gql, postJson } from '../support/http.ts';

jest.setTimeout(60_000);
const PASSWORD = 'Correct-Horse-9';
const DEPTH = 'query depth exceeds the maximum of 15';
const COMPLEXITY = 'query complexity exceeds the maximum of 300';
const ALIASES = 'query uses more than the maximum of 30 aliases';

const signupField = (email: string): string => `signup(params: {email: "${email}", password: "${PASSWORD}", confirm_password: "${PASSWORD}"}) { message }`;
const aliased = (n: number, field: (i: number) => string): string => Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join(' ');
/** `__type { ofType { … } }` nested to `depth` fields: valid at any depth, so only the limit can stop it */
const ofTypes = (depth: number): string => {
  let s = 'name';
  for (let i = 2; i < depth; i++) s = `ofType { ${s} }`;
  return `__type(name: "Query") { ${s} }`;
};
/** the GraphQL errors as [message, extensions] pairs, and whether `data` came back */
const refusal = (body: { data?: unknown; errors?: Array<{ message: string; extensions: unknown }> }) =>
  ({ data: body.data ?? null, errors: (body.errors ?? []).map((e) => [e.message, e.extensions]) });
const FRESH = { data: { signup: { message: 'Signed up successfully.' } } };
const refused = (message: string) => ({ data: null, errors: [[message, { code: 'INVALID_ARGUMENT' }]] });

describe.each<Mode>(['all', 'split'])('GraphQL query limits (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment(mode, { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  /**
   * Signs `email` up: the answer is {@link FRESH} only when no user had it, so it proves an earlier
   * request created none (behaviour.md §3.2: a taken email is 400 `user with given email already exists`).
   */
  const signUp = async (email: string): Promise<unknown> => (await gql(d.url, `mutation { ${signupField(email)} }`)).body;
  const emails = (tag: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${tag}-${i}-${Date.now()}@example.com`);

  it('refuses a 50-level query without running it (introspection is no way around the limit)', async () => {
    const deep = await gql(d.url, `query { ${ofTypes(50)} }`);
    expect(deep.status).toBe(200);
    expect(refusal(deep.body)).toEqual(refused(DEPTH));
    // the limit covers the whole document: a signup beside a too-deep query does not run either
    const [email] = emails('deep', 1);
    const doc = `mutation SignUp { ${signupField(email!)} } query Deep { ${ofTypes(50)} }`;
    const r = await postJson(`${d.url}/graphql`, { query: doc, operationName: 'SignUp' }, { origin: d.url });
    expect([r.status, refusal(r.body)]).toEqual([200, refused(DEPTH)]);
    expect(await signUp(email!)).toEqual(FRESH);
  });

  it('refuses signup aliased 200 times: no user is created', async () => {
    const list = emails('alias', 200);
    const r = await gql(d.url, `mutation { ${aliased(200, (i) => signupField(list[i]!))} }`);
    expect([r.status, refusal(r.body)]).toEqual([200, refused(ALIASES)]);
    for (const email of [list[0]!, list[30]!, list[199]!]) expect(await signUp(email)).toEqual(FRESH);
    // the check sees a user that exists
    expect(refusal(await signUp(list[0]!) as never)).toEqual({ data: null, errors: [['user with given email already exists', { code: 'INVALID_ARGUMENT' }]] });
  });

  it('runs documents exactly at the limits', async () => {
    // GraphiQL's introspection query is depth 15 with 240 selections
    const schema = await gql(d.url, getIntrospectionQuery({ descriptions: true, schemaDescription: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true }));
    expect([schema.status, schema.body.errors, schema.body.data.__schema.queryType.name]).toEqual([200, undefined, 'Query']);
    const at15 = await gql(d.url, `query { ${ofTypes(15)} }`);
    expect(at15.body).toEqual({ data: { __type: { ofType: null } } });
    expect(refusal((await gql(d.url, `query { ${ofTypes(16)} }`)).body)).toEqual(refused(DEPTH));
    const thirty = await gql(d.url, `query { ${aliased(30, () => 'meta { version }')} }`);
    expect(Object.keys(thirty.body.data)).toHaveLength(30);
    expect(refusal((await gql(d.url, `query { ${aliased(31, () => '__typename')} }`)).body)).toEqual(refused(ALIASES));
    const at300 = await gql(d.url, `query { meta { ${'version '.repeat(299)}} }`);
    expect(at300.body).toEqual({ data: { meta: { version: expect.any(String) } } });
    expect(refusal((await gql(d.url, `query { meta { ${'version '.repeat(300)}} }`)).body)).toEqual(refused(COMPLEXITY));
  });

  it('refuses self-recursive and cyclic fragments cleanly', async () => {
    const self = await gql(d.url, 'query { meta { ...F } } fragment F on Meta { version ...F }');
    expect([self.status, refusal(self.body)]).toEqual([200, refused('Cannot spread fragment "F" within itself.')]);
    const cycle = await gql(d.url, 'query { meta { ...A } } fragment A on Meta { ...B ...B } fragment B on Meta { version ...A ...A }');
    expect(cycle.status).toBe(200);
    expect(new Set(refusal(cycle.body).errors.map(([m]) => m))).toEqual(new Set(['Cannot spread fragment "A" within itself via "B".']));
  });

  it('refuses fragment fan-out and field floods at once, counting each spread', async () => {
    // F0 spreads F1 twice, …, F39 spreads F40 twice: 2^40 expansions in 2 KB
    const defs = Array.from({ length: 40 }, (_, i) => `fragment F${i} on Meta { ...F${i + 1} ...F${i + 1} }`).join(' ');
    const flood = `query { meta { ${'version '.repeat(60_000)}} }`; // 480 KB, one field repeated
    for (const query of [`query { meta { ...F0 } } ${defs} fragment F40 on Meta { version }`, flood]) {
      const started = Date.now();
      const r = await gql(d.url, query);
      expect([r.status, refusal(r.body)]).toEqual([200, refused(COMPLEXITY)]);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    // the server is still responsive
    expect((await gql(d.url, 'query { meta { version } }')).body.data.meta.version).toEqual(expect.any(String));
  });

  it('refuses a batched (array) body with 400 and runs none of its operations', async () => {
    const list = emails('batch', 2);
    const r = await postJson(`${d.url}/graphql`, list.map((email) => ({ query: `mutation { ${signupField(email)} }` })), { origin: d.url });
    expect([r.status, r.body]).toEqual([400, { errors: [{ message: 'Operation batching disabled.', extensions: { code: 'INVALID_ARGUMENT' } }] }]);
    for (const email of list) expect(await signUp(email)).toEqual(FRESH);
  });
});
