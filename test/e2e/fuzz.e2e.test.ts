/**
 * @module test/e2e/fuzz
 * No input reaches a 5xx (issue 30 §5): a property-based fuzzer (fast-check) drives every route of a
 * running deployment on all three surfaces, in both modes (all-in-one on SQLite; split on PostgreSQL,
 * Redis and NATS, where each request crosses the gateway, a gRPC hop and a service, and an error is
 * mapped at each hop), with generated requests: every
 * `/v1` route of `/openapi.json` (bodies shaped by its request schema, and junk), every GraphQL
 * query and mutation of the served schema (variables shaped by its input types), and every RPC of
 * every public gRPC service. Values mix NUL bytes and other controls, over-long and non-ASCII text,
 * SQL and id look-alikes, wrong JSON types and a marker secret; requests go anonymous, as a user and
 * as the super-admin. A fourth property sends generated request headers as raw bytes (credentials,
 * cookies, content types, forwarding headers, control and Latin-1 bytes) to every route of the three
 * HTTP wires: the `/v1` table, GraphQL, the OAuth/OIDC, SSO, SAML and SCIM endpoints and the pages; a
 * fifth sends generated parameters (the OAuth, OIDC, SAML and SCIM names, hostile values) to the
 * endpoints outside the `/v1` table, in the query and in the form or JSON body.
 * Each answer must be a 4xx/2xx/3xx (REST, GraphQL) or a non-internal gRPC status,
 * never a reset connection, and no error message may carry the admin secret, the internal token or
 * the marker secret. Runs are bounded (a fixed seed and `numRuns` per route, the {@link FILLS} examples
 * counted in it) to keep the suite near two minutes in all-in-one and one more in split mode, which
 * runs the examples and one generated request per route.
 */
import { describe, it, expect, beforeAll, afterAll, beforeEach, jest } from '@jest/globals';
import net from 'node:net';
import fc from 'fast-check';
import { createCallContext, createGrpcClient, serviceDescriptor, servicesWithProto } from '@gatehouse/rpc';
import { startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { PASSWORD, address, signup } from './email-support.ts';

jest.setTimeout(600_000);

/** A value no answer may ever echo (sent in password and secret fields, and anywhere as text). */
const MARKER = 'Fz-secret-7d1e0c5b9a';
const SEED = 30_05;

type Json = Record<string, any>;

const nasty = fc.constantFrom(
  'a\u0000b', '\u0000', '\u0001\u001f\u007f', 'line\nbreak', 'tab\there', '\r\n', '%00', '\\u0000', "' OR '1'='1", '"; DROP TABLE authn_users; --',
  '../../etc/passwd', '<script>alert(1)</script>', '💥🙂', '\ud800', 'Ω'.repeat(300), 'x'.repeat(9_000), 'x'.repeat(70_000), '',
  '00000000-0000-4000-8000-000000000000', 'user:anne', 'document:readme', 'a@b.c', '+15005550006', MARKER,
);
const text = fc.oneof({ weight: 3, arbitrary: nasty }, { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) }, fc.uuid(), fc.emailAddress());
const junk: fc.Arbitrary<unknown> = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));

/** A value for a JSON Schema of the OpenAPI document (`$ref`s resolved in `defs`), or junk. */
function fromSchema(schema: Json | undefined, defs: Json, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 3) return junk;
  if (schema.$ref) return fromSchema(defs[String(schema.$ref).replace('#/components/schemas/', '')], defs, depth + 1);
  if (schema.anyOf) return fc.oneof(...(schema.anyOf as Json[]).map((s) => fromSchema(s, defs, depth)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const typed = ((): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string': return schema.enum ? fc.constantFrom(...(schema.enum as string[])) : text;
      case 'integer': return fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.constantFrom(1e20, -1, 0));
      case 'number': return fc.double();
      case 'boolean': return fc.boolean();
      case 'array': return fc.array(fromSchema(schema.items as Json, defs, depth + 1), { maxLength: 3 });
      case 'object': {
        const props = Object.entries((schema.properties ?? {}) as Record<string, Json>);
        if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), junk, { maxKeys: 3 });
        return fc.record(Object.fromEntries(props.map(([k, s]) => [k, fromSchema(s, defs, depth + 1)])), { requiredKeys: [] });
      }
      default: return junk;
    }
  })();
  // mostly well-typed values (they reach the handlers), sometimes a wrong type (the codec's refusal)
  return fc.oneof({ weight: 5, arbitrary: typed }, { weight: 1, arbitrary: junk });
}

/**
 * A body whose every string field (and every string of a string list), down to nested messages, is
 * `v`: the examples every route gets besides the generated ones, so a NUL byte or an over-long value
 * reaches each field of each route at least once as the super-admin.
 */
function filledWith(schema: Json | undefined, defs: Json, v: string, depth = 0): unknown {
  if (!schema || depth > 3) return v;
  if (schema.$ref) return filledWith(defs[String(schema.$ref).replace('#/components/schemas/', '')], defs, v, depth + 1);
  if (schema.anyOf) return filledWith((schema.anyOf as Json[]).find((s) => s.type !== 'null'), defs, v, depth);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'string' && !schema.enum) return v;
  if (type === 'array') return [filledWith(schema.items as Json, defs, v, depth + 1)];
  if (type === 'object' && schema.properties) {
    return Object.fromEntries(Object.entries(schema.properties as Record<string, Json>).map(([k, s]) => [k, filledWith(s, defs, v, depth + 1)]));
  }
  return undefined;
}

/** The same for a GraphQL input type. */
function graphqlFilledWith(ref: Json, inputs: Map<string, Json>, v: string, depth = 0): unknown {
  if (ref.kind === 'NON_NULL') return graphqlFilledWith(ref.ofType, inputs, v, depth);
  if (ref.kind === 'LIST') return [graphqlFilledWith(ref.ofType, inputs, v, depth + 1)];
  if (ref.kind === 'INPUT_OBJECT' && depth < 4) {
    return Object.fromEntries(((inputs.get(ref.name)?.inputFields ?? []) as Json[]).map((f) => [f.name, graphqlFilledWith(f.type, inputs, v, depth + 1)]));
  }
  if (ref.name === 'String' || ref.name === 'ID') return v;
  if (ref.name === 'Int') return 1;
  if (ref.name === 'Boolean') return true;
  if (ref.kind === 'ENUM') return (inputs.get(ref.name)?.enumValues as Json[] | undefined)?.[0]?.name;
  return null;
}

/** The values every field of every route is filled with once, as the super-admin (index 2 of the callers). */
const FILLS = ['a\u0000b', '\u0000', 'x\u0007y', 'x'.repeat(70_000)];
const ADMIN = 2;

/**
 * Per mode: requests per route (fast-check's `numRuns`, of which the {@link FILLS} examples are the first
 * four), and the fewest requests the whole run must have made.
 */
const MODES: Array<{ mode: Mode; runs: number; atLeast: number }> = [
  { mode: 'all', runs: 6, atLeast: 1500 },
  { mode: 'split', runs: FILLS.length + 1, atLeast: 1200 },
];

/** A GraphQL input value for an introspected type reference. */
function fromGraphqlType(ref: Json, inputs: Map<string, Json>, depth = 0): fc.Arbitrary<unknown> {
  if (ref.kind === 'NON_NULL') return fromGraphqlType(ref.ofType, inputs, depth);
  if (ref.kind === 'LIST') return fc.array(fromGraphqlType(ref.ofType, inputs, depth + 1), { maxLength: 3 });
  if (ref.kind === 'ENUM') return fc.constantFrom(...((inputs.get(ref.name)?.enumValues ?? [{ name: 'X' }]) as Json[]).map((e) => e.name));
  if (ref.kind === 'INPUT_OBJECT' && depth < 4) {
    const fields = (inputs.get(ref.name)?.inputFields ?? []) as Json[];
    return fc.record(Object.fromEntries(fields.map((f) => [f.name, fromGraphqlType(f.type, inputs, depth + 1)])), { requiredKeys: [] });
  }
  switch (ref.name) {
    case 'Int': return fc.integer({ min: -5, max: 2000 });
    case 'Float': return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'Boolean': return fc.boolean();
    case 'String': case 'ID': return text;
    default: return fc.jsonValue({ maxDepth: 2 });
  }
}

/** The HTTP routes outside the `/v1` table and GraphQL (their own wire): method and path. */
const OTHER_ROUTES: Array<[string, string]> = [
  ['POST', '/oauth/token'], ['GET', '/authorize?response_type=code&client_id=x'], ['POST', '/authorize'], ['POST', '/oauth/revoke'],
  ['POST', '/oauth/introspect'], ['GET', '/userinfo'], ['POST', '/userinfo'], ['GET', '/logout'], ['POST', '/oauth/register'],
  ['GET', '/oauth/register/x'], ['PUT', '/oauth/register/x'], ['DELETE', '/oauth/register/x'], ['POST', '/oauth/par'],
  ['GET', '/.well-known/openid-configuration'], ['GET', '/.well-known/jwks.json'], ['GET', '/verify_email?token=x'],
  ['GET', '/oauth/sso/discover?email=a@b.c'], ['GET', '/oauth/sso/x/login'], ['GET', '/oauth/sso/x/callback?code=x&state=y'],
  ['GET', '/oauth/saml/x/metadata'], ['GET', '/oauth/saml/x/login'], ['POST', '/oauth/saml/x/acs'], ['GET', '/oauth/saml/x/idp/metadata'],
  ['GET', '/scim/v2/x/Users'], ['POST', '/scim/v2/x/Users'], ['GET', '/graphql'], ['GET', '/app/login'], ['GET', '/'],
  ['GET', '/openapi.json'], ['GET', '/healthz'], ['GET', '/readyz'],
  // issue 34 §7 (served with --mcp-enabled below): the MCP endpoint, its RFC 9728 and RFC 8414 metadata
  ['POST', '/mcp'], ['GET', '/.well-known/oauth-protected-resource/mcp'], ['GET', '/.well-known/oauth-authorization-server'],
];

/** The parameter names of the OAuth 2.0, OIDC, SSO, SAML and SCIM wires (RFC 6749, 7009, 7662, 7591, 8693, 9126; OIDC Core; SAML bindings; RFC 7644). */
const WIRE_PARAMS = [
  'client_id', 'client_secret', 'grant_type', 'code', 'redirect_uri', 'refresh_token', 'token', 'token_type_hint', 'scope', 'state', 'nonce',
  'response_type', 'response_mode', 'code_challenge', 'code_challenge_method', 'code_verifier', 'request_uri', 'request', 'prompt', 'max_age',
  'login_hint', 'id_token_hint', 'post_logout_redirect_uri', 'client_assertion', 'client_assertion_type', 'subject_token', 'subject_token_type',
  'actor_token', 'actor_token_type', 'resource', 'audience', 'email', 'SAMLResponse', 'SAMLRequest', 'RelayState', 'SigAlg', 'Signature',
  'filter', 'startIndex', 'count', 'redirect_uris', 'client_name', 'token_endpoint_auth_method', 'grant_types',
];
/** Generated wire parameters: some names of {@link WIRE_PARAMS} (sometimes repeated) with hostile values. */
const wireParams = fc.array(fc.tuple(fc.constantFrom(...WIRE_PARAMS), fc.oneof({ weight: 3, arbitrary: text }, fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange', 'code', 'S256', 'plain', 'form_post', 'web_message', 'http://localhost/cb', 'none'))), { maxLength: 8 });

/** A header value as an attacker may send it: printable junk, Latin-1, controls a parser must refuse, huge values. */
const headerText = fc.oneof(
  fc.constantFrom('', ' ', 'a\u0000b', '\u0001\u007f', 'tab\there', 'caf\u00e9', '\u00ff\u00fe', '%00', '%E0%A4%A', "' OR '1'='1", MARKER, 'x'.repeat(9_000), 'x'.repeat(70_000), 'null', 'undefined', '[object Object]'),
  fc.string({ minLength: 0, maxLength: 30 }).map((v) => v.replace(/[\r\n]/g, '')),
);
const fakeJwt = fc.tuple(fc.constantFrom('{"alg":"none"}', '{"alg":"HS256","kid":"../../x"}', '{"alg":"RS256","kid":"\u0000"}', '{}', 'not json'), fc.jsonValue({ maxDepth: 1 }), headerText)
  .map(([h, p, sig]) => `${Buffer.from(h).toString('base64url')}.${Buffer.from(JSON.stringify(p) ?? '').toString('base64url')}.${Buffer.from(sig, 'latin1').toString('base64url')}`);
/** Generated request headers, as [name, value] pairs (a header may repeat). */
const headerSet = fc.record({
  authorization: fc.option(fc.oneof(headerText.map((v) => `Bearer ${v}`), fakeJwt.map((v) => `Bearer ${v}`), headerText.map((v) => `Basic ${Buffer.from(v, 'latin1').toString('base64')}`), fc.constantFrom('Bearer', 'Basic', 'DPoP x', 'Bearer a b c'), headerText)),
  cookie: fc.option(fc.oneof(
    fc.tuple(fc.constantFrom('cookie_session', 'cookie_session_domain', 'mfa', 'service-admin', '__Host-gatehouse_social', 'gh_sso_state'), headerText).map(([k, v]) => `${k}=${v}`),
    fc.constant('cookie_session=a; cookie_session=b; mfa=; service-admin'), fc.constant('a=1; '.repeat(2_000)), headerText,
  )),
  contentType: fc.option(fc.oneof(fc.constantFrom('application/json', 'application/json; charset=utf-16le', 'application/json; charset=bogus', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=--x', 'application/scim+json', 'application/xml'), headerText)),
  adminSecret: fc.option(headerText),
  origin: fc.option(fc.oneof(fc.constantFrom('null', 'http://evil.example', 'file://'), headerText)),
  forwarded: fc.option(fc.oneof(fc.constantFrom('1.2.3.4', '::1, 999.1.1.1', '300.300.300.300', 'for=1.2.3.4;proto=https', 'x'.repeat(5_000)), headerText)),
  misc: fc.array(fc.tuple(fc.constantFrom('accept', 'accept-encoding', 'accept-language', 'user-agent', 'x-request-id', 'traceparent', 'if-match', 'dpop', 'x-forwarded-proto', 'x-forwarded-host', 'host'), headerText), { maxLength: 3 }),
}).map((h) => [
  ...(h.authorization !== null ? [['authorization', h.authorization]] : []),
  ...(h.cookie !== null ? [['cookie', h.cookie]] : []),
  ...(h.contentType !== null ? [['content-type', h.contentType]] : []),
  ...(h.adminSecret !== null ? [['x-service-admin-secret', h.adminSecret]] : []),
  ...(h.origin !== null ? [['origin', h.origin]] : []),
  ...(h.forwarded !== null ? [['x-forwarded-for', h.forwarded]] : []),
  ...h.misc,
] as Array<[string, string]>);

/**
 * One HTTP/1.1 request written as raw bytes on a new TCP connection (fetch and node:http refuse the
 * header bytes an attacker sends), read to the end of the connection.
 * @returns the status code and the raw answer after the status line, or an error naming what happened
 * @throws never: a reset, a timeout (20 s) or an unparsable answer is returned as `error`
 */
function rawRequest(origin: URL, method: string, path: string, headers: Array<[string, string]>, body: string): Promise<{ status: number; rest: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(origin.port), origin.hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (error?: string): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0);
      const rest = raw.slice(raw.indexOf('\r\n') + 2);
      const problem = error ?? (status === 0 ? `no status line: ${raw.slice(0, 80)}` : undefined);
      resolve(problem === undefined ? { status, rest } : { status, rest, error: problem });
    };
    socket.setTimeout(20_000, () => done('timeout'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => done());
    socket.on('error', (err) => done(err.message));
    const payload = Buffer.from(body, 'utf8');
    const head = [`${method} ${path} HTTP/1.1`, `Host: ${origin.host}`, ...headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${payload.length}`, 'Connection: close', '', ''].join('\r\n');
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), payload]));
  });
}

const typeString = (ref: Json): string => (ref.kind === 'NON_NULL' ? `${typeString(ref.ofType)}!` : ref.kind === 'LIST' ? `[${typeString(ref.ofType)}]` : ref.name);
const namedKind = (ref: Json): string => (ref.ofType ? namedKind(ref.ofType) : ref.kind);

describe.each(MODES)('fuzzing every route on REST, GraphQL and gRPC (issue 30 §5, $mode)', ({ mode, runs, atLeast }) => {
  let d: Deployment;
  let callers: Array<Record<string, string>>;
  const failures: string[] = [];
  let requests = 0;

  /** Records what an answer must never be. */
  const judge = (where: string, status: number, message: string): void => {
    requests += 1;
    if (status >= 500) failures.push(`${where}: ${status} ${message.slice(0, 200)}`);
    for (const secret of [d.adminSecret, d.internalToken, MARKER]) {
      if (message.includes(secret)) failures.push(`${where}: the answer carries a secret: ${message.slice(0, 200)}`);
    }
  };

  beforeAll(async () => {
    d = await startDeployment(mode, { readyTimeoutMs: 60_000, flags: ['--mcp-enabled'] });
    const user = await signup(d.url, address('fuzz'));
    expect(user.status).toBe(200);
    callers = [{}, { authorization: `Bearer ${user.body.access_token}` }, { 'x-service-admin-secret': d.adminSecret }];
  }, 120_000);
  afterAll(async () => { await d?.stop(); });
  beforeEach(() => { failures.length = 0; });

  it('REST: every /v1 route of /openapi.json, with bodies from its request schema and junk', async () => {
    const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as Json;
    const defs = doc.components.schemas as Json;
    const routes = Object.entries(doc.paths as Record<string, Json>).filter(([p]) => p.startsWith('/v1/'));
    expect(routes.length).toBeGreaterThan(100);
    for (const [path, ops] of routes) {
      for (const [method, op] of Object.entries(ops as Record<string, Json>)) {
        const schema = op.requestBody?.content?.['application/json']?.schema as Json | undefined;
        const body = fc.oneof({ weight: 6, arbitrary: fromSchema(schema, defs) }, { weight: 1, arbitrary: fc.constantFrom('{', '[1,', '"\u0000"', '{"a":'.repeat(200)) });
        await fc.assert(fc.asyncProperty(body, fc.nat({ max: callers.length - 1 }), async (b, who) => {
          const where = `REST ${method.toUpperCase()} ${path}`;
          try {
            const res = await fetch(`${d.url}${path}`, method === 'get'
              ? { headers: callers[who]! }
              : { method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...callers[who] }, body: typeof b === 'string' ? b : JSON.stringify(b) });
            judge(where, res.status, await res.text());
          } catch (err) {
            failures.push(`${where}: no answer (${(err as Error).message})`);
          }
        }), { numRuns: runs, seed: SEED, endOnFailure: true, examples: FILLS.map((v) => [filledWith(schema, defs, v) ?? {}, ADMIN] as [unknown, number]) });
      }
    }
    expect(failures).toEqual([]);
  });

  it('GraphQL: every query and mutation of the served schema, with variables from its input types', async () => {
    const intro = await fetch(`${d.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', origin: d.url },
      body: JSON.stringify({ query: `{ __schema { types { name kind enumValues { name } inputFields { name type { ...T } } }
        queryType { fields { name args { name type { ...T } } type { ...T } } }
        mutationType { fields { name args { name type { ...T } } type { ...T } } } } }
        fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }` }),
    });
    const schema = ((await intro.json()) as Json).data.__schema as Json;
    const inputs = new Map<string, Json>((schema.types as Json[]).map((t) => [t.name, t]));
    const fields = [...(schema.queryType.fields as Json[]).map((f) => ['query', f] as const), ...(schema.mutationType.fields as Json[]).map((f) => ['mutation', f] as const)];
    expect(fields.length).toBeGreaterThan(100);
    for (const [kind, field] of fields) {
      const args = field.args as Json[];
      const vars = fc.record(Object.fromEntries(args.map((a) => [a.name, fromGraphqlType(a.type, inputs)])), { requiredKeys: [] });
      const selection = ['SCALAR', 'ENUM'].includes(namedKind(field.type)) ? '' : ' { __typename }';
      const decl = args.length ? `(${args.map((a) => `$${a.name}: ${typeString(a.type)}`).join(', ')})` : '';
      const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
      const query = `${kind}${decl} { ${field.name}${call}${selection} }`;
      await fc.assert(fc.asyncProperty(vars, fc.nat({ max: callers.length - 1 }), async (variables, who) => {
        const where = `GraphQL ${field.name}`;
        try {
          const res = await fetch(`${d.url}/graphql`, {
            method: 'POST', headers: { 'content-type': 'application/json', origin: d.url, ...callers[who] }, body: JSON.stringify({ query, variables }),
          });
          const answer = await res.text();
          judge(where, res.status, answer);
          if (/"code":"INTERNAL(_SERVER_ERROR)?"/.test(answer)) failures.push(`${where}: internal error ${answer.slice(0, 200)}`);
        } catch (err) {
          failures.push(`${where}: no answer (${(err as Error).message})`);
        }
      }), {
        numRuns: runs, seed: SEED, endOnFailure: true,
        examples: FILLS.map((v) => [Object.fromEntries(args.map((a) => [a.name, graphqlFilledWith(a.type, inputs, v)])), ADMIN] as [Record<string, unknown>, number]),
      });
    }
    expect(failures).toEqual([]);
  });

  it('gRPC: every RPC of every public service on the public port', async () => {
    let rpcs = 0;
    for (const service of servicesWithProto()) {
      const desc = serviceDescriptor(service);
      const client = createGrpcClient(desc, { address: d.grpcAddress });
      try {
        for (const method of desc.methods.values()) {
          if (method.auth === 'internal') continue;
          rpcs += 1;
          const fields = method.requestType.fieldsArray;
          const value = (type: string, repeated: boolean): fc.Arbitrary<unknown> => {
            const one: fc.Arbitrary<unknown> = type === 'string' ? text : type === 'bool' ? fc.boolean() : /int|fixed/.test(type) ? fc.integer({ min: 0, max: 2000 }) : type === 'double' || type === 'float' ? fc.double({ noNaN: true, noDefaultInfinity: true }) : fc.constant(null);
            return repeated ? fc.array(one, { maxLength: 3 }) : one;
          };
          const req = fc.record(Object.fromEntries(fields.map((f) => [f.name, value(f.type, f.repeated)])), { requiredKeys: [] });
          await fc.assert(fc.asyncProperty(req, fc.nat({ max: callers.length - 1 }), async (body, who) => {
            const where = `gRPC ${desc.fullName}/${method.name}`;
            const err = await client.call(method.name, body as Record<string, unknown>, createCallContext({ headers: callers[who]!, protocol: 'grpc' }))
              .then(() => null, (e: unknown) => e as { code?: string; message?: string });
            requests += 1;
            if (err && ['internal', 'unknown', 'data_loss'].includes(String(err.code))) failures.push(`${where}: ${err.code} ${String(err.message).slice(0, 200)}`);
            if (err?.message) judge(where, 200, err.message);
          }), {
            numRuns: runs, seed: SEED, endOnFailure: true,
            examples: FILLS.map((v) => [Object.fromEntries(fields.filter((f) => f.type === 'string').map((f) => [f.name, f.repeated ? [v] : v])), ADMIN] as [Record<string, unknown>, number]),
          });
        }
      } finally {
        client.close();
      }
    }
    expect(rpcs).toBeGreaterThan(100);
    expect(failures).toEqual([]);
  });

  it('headers: generated request headers, as raw bytes, on every HTTP route of the three wires', async () => {
    const doc = (await (await fetch(`${d.url}/openapi.json`)).json()) as Json;
    const table = Object.entries(doc.paths as Record<string, Json>).filter(([p]) => p.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.keys(ops as Json).map((m) => [m.toUpperCase(), path] as [string, string]));
    const routes: Array<[string, string]> = [...table, ['POST', '/graphql'], ...OTHER_ROUTES];
    const origin = new URL(d.url);
    let answered = 0;
    for (const [method, path] of routes) {
      const body = path === '/graphql' ? JSON.stringify({ query: '{ meta { version } }' }) : method === 'GET' ? '' : '{}';
      await fc.assert(fc.asyncProperty(headerSet, async (headers) => {
        const where = `headers ${method} ${path} ${JSON.stringify(headers).slice(0, 300)}`;
        const res = await rawRequest(origin, method, path, headers, body);
        // a parser may answer 400 and close while the request is still being written (a reset after a
        // whole answer); an answer that never came is the failure
        if (res.status === 0) {
          failures.push(`${where}: no answer (${res.error})`);
          return;
        }
        answered += 1;
        judge(where, res.status, res.rest.slice(res.rest.indexOf('\r\n\r\n') + 4));
      }), { numRuns: runs, seed: SEED, endOnFailure: true });
    }
    expect(failures).toEqual([]);
    expect(answered).toBe(routes.length * runs);
  });

  it('OAuth, OIDC, SSO, SAML and SCIM endpoints: generated parameters in the query and the body', async () => {
    // a control character in a parameter is the client's error (RFC 6749 §5.2 invalid_request), and an
    // unknown client id of any shape is an unknown client (PostgreSQL's uuid column is not asked)
    const nul = await fetch(`${d.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&state=%00' });
    expect([nul.status, ((await nul.json()) as Json).error]).toEqual([400, 'invalid_request']);
    const unknown = await fetch(`${d.url}/authorize?response_type=code&client_id=x&redirect_uri=http%3A%2F%2Flocalhost%2Fcb`, { redirect: 'manual' });
    expect(unknown.status).toBe(400);
    for (const [method, route] of OTHER_ROUTES) {
      const path = route.split('?')[0]!;
      if (!/^\/(oauth|authorize|userinfo|logout|verify_email|scim)/.test(path)) continue;
      const json = path.startsWith('/scim') || path.startsWith('/oauth/register');
      await fc.assert(fc.asyncProperty(wireParams, fc.nat({ max: callers.length - 1 }), async (params, who) => {
        const where = `wire ${method} ${path} ${JSON.stringify(params).slice(0, 300)}`;
        const form = new URLSearchParams(params);
        try {
          const res = method === 'GET' || method === 'DELETE'
            ? await fetch(`${d.url}${path}?${form.toString()}`, { method, headers: callers[who]!, redirect: 'manual' })
            : await fetch(`${d.url}${path}`, {
              method, redirect: 'manual',
              headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', origin: d.url, ...callers[who] },
              body: json ? JSON.stringify(Object.fromEntries(params)) : form.toString(),
            });
          judge(where, res.status, await res.text());
        } catch (err) {
          failures.push(`${where}: no answer (${(err as Error).message})`);
        }
      }), { numRuns: runs * 4, seed: SEED, endOnFailure: true });
    }
    expect(failures).toEqual([]);
  });

  it('the deployment still serves after the run', async () => {
    const health = await fetch(`${d.url}/healthz`);
    expect(health.status).toBe(200);
    const login = await signup(d.url, address('after'));
    expect([login.status, PASSWORD.length > 0]).toEqual([200, true]);
    expect(requests).toBeGreaterThan(atLeast);
  });
});
