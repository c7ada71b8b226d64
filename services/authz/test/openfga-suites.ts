/**
 * @module openfga-suites: OpenFGA's own conformance data (its release's `assets/tests`: the consolidated
 * schema 1.1 cases and the ABAC / conditions cases), replayed against the embedded engine the way OpenFGA's
 * own `tests/check`, `tests/listobjects` and `tests/listusers` runners replay it against an OpenFGA server:
 * each test in a fresh store, its stages in order, every check, list objects and list users assertion
 * asked, and each single-stage test asked a second time with its tuples sent as contextual tuples instead
 * of written. `scripts/install-openfga-tests.sh` fetches the data into `.tools/openfga-tests` from the
 * pinned release's Go module; it is not copied into this repository.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { AppError } from '@gatehouse/errors';
import { createEngine, type Engine, type Tuple } from '../src/domain/index.ts';
import { createMemoryStore } from '../src/storage/memory.ts';

/** A tuple as OpenFGA's data writes it (a condition with an optional context). */
interface FgaTuple {
  user: string;
  relation: string;
  object: string;
  condition?: { name: string; context?: Record<string, unknown> };
}

/** What every assertion may carry: a request context, contextual tuples and an expected OpenFGA error code. */
interface FgaAssertionBase {
  context?: Record<string, unknown>;
  contextualTuples?: FgaTuple[];
  errorCode?: number;
}

interface FgaStage {
  model: string;
  tuples?: FgaTuple[];
  checkAssertions?: Array<FgaAssertionBase & { tuple: FgaTuple; expectation?: boolean }>;
  listObjectsAssertions?: Array<FgaAssertionBase & { request: { user: string; type: string; relation: string }; expectation?: string[] | null }>;
  listUsersAssertions?: Array<FgaAssertionBase & { request: { object: string; relation: string; filters: string[] }; expectation?: string[] | null }>;
}

/** One test of OpenFGA's data: a name and the stages run in order on one store. */
export interface FgaTest {
  name: string;
  stages: FgaStage[];
}

/** The directory install-openfga-tests.sh fills. */
export const OPENFGA_TESTS_DIR = join(fileURLToPath(new URL('../../..', import.meta.url)), '.tools', 'openfga-tests');

/**
 * The tests of one of OpenFGA's data files (`abac_tests.yaml`, `consolidated_1_1_tests.yaml`).
 * @throws Error naming the install script when the data is not there
 */
export function loadFgaTests(file: string): FgaTest[] {
  const path = join(OPENFGA_TESTS_DIR, file);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`bash scripts/install-openfga-tests.sh\` (npm test's pretest does)`);
  return (parse(readFileSync(path, 'utf8')) as { tests: FgaTest[] }).tests;
}

/**
 * An OpenFGA error code as the engine's: the 2000s (`validation_error` 2000, `authorization_model_resolution_too_complex`
 * 2002, `type_not_found` 2021, `relation_not_found` 2022, `invalid_tuple` 2027, ...) are all a refused request,
 * gRPC INVALID_ARGUMENT / HTTP 400, which is the engine's `invalid_argument`.
 */
const codeOf = (fga: number): string => (fga >= 2000 && fga < 3000 ? 'invalid_argument' : `OpenFGA code ${fga}`);

const toTuple = (t: FgaTuple): Tuple => ({ user: t.user, relation: t.relation, object: t.object, ...(t.condition ? { condition: { name: t.condition.name, context: t.condition.context ?? null } } : {}) });

/** An answer or a refusal, as one comparable value. */
async function answer(work: () => Promise<unknown>): Promise<unknown> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError) return { error: err.code };
    throw err;
  }
}

/** Whether a test is asked again with its tuples as contextual tuples, as OpenFGA's runners do. */
export const hasContextualVariant = (t: FgaTest): boolean => t.stages.length === 1 && (t.stages[0]!.tuples?.length ?? 0) <= 100;

/**
 * Runs one test against a fresh engine, by default the embedded one over the memory store; `fresh` gives
 * another (e.g. the OpenFGA backend's adapter on a new store of a server reached through OpenFGA's SDK).
 * With `contextual`, the stage's tuples are not written but sent with every assertion as contextual tuples.
 * @returns every assertion the engine answers differently, as readable lines (empty: full agreement)
 */
export async function runFgaTest(t: FgaTest, contextual: boolean, fresh: () => Promise<Engine> = async () => createEngine({ store: createMemoryStore() })): Promise<string[]> {
  const out: string[] = [];
  const same = (what: string, got: unknown, expected: unknown): void => {
    if (!isDeepStrictEqual(got, expected)) out.push(`${what}: engine ${JSON.stringify(got)}, OpenFGA ${JSON.stringify(expected)}`);
  };
  const engine = await fresh();
  for (const [i, stage] of t.stages.entries()) {
    const at = `${t.name}${contextual ? ' (contextual tuples)' : ''} stage ${i}`;
    await engine.writeModel(stage.model);
    const tuples = (stage.tuples ?? []).map(toTuple);
    if (!contextual) for (let k = 0; k < tuples.length; k += 100) await engine.writeTuples(tuples.slice(k, k + 100));
    const ctxOf = (a: FgaAssertionBase): Tuple[] => [...(a.contextualTuples ?? []).map(toTuple), ...(contextual ? tuples : [])];
    const want = (a: FgaAssertionBase, ok: unknown): unknown => (a.errorCode ? { error: codeOf(a.errorCode) } : ok);

    for (const [n, a] of (stage.checkAssertions ?? []).entries()) {
      const got = await answer(async () => (await engine.check(a.tuple.user, [{ relation: a.tuple.relation, object: a.tuple.object, contextual_tuples: ctxOf(a), context: a.context }]))[0]!.allowed);
      same(`${at} check ${n} ${a.tuple.object}#${a.tuple.relation}@${a.tuple.user} context ${JSON.stringify(a.context ?? {})}`, got, want(a, a.expectation ?? false));
    }
    for (const [n, a] of (stage.listObjectsAssertions ?? []).entries()) {
      const got = await answer(async () => (await engine.listPermissions(a.request.user, { relation: a.request.relation, object_type: a.request.type, contextual_tuples: ctxOf(a), context: a.context })).objects);
      same(`${at} list objects ${n} ${a.request.type}#${a.request.relation}@${a.request.user} context ${JSON.stringify(a.context ?? {})}`, got, want(a, [...(a.expectation ?? [])].sort()));
    }
    for (const [n, a] of (stage.listUsersAssertions ?? []).entries()) {
      const [filter] = a.request.filters;
      const got = await answer(async () => (await engine.listUsers({ object: a.request.object, relation: a.request.relation, user_type: filter, contextual_tuples: ctxOf(a), context: a.context })).users);
      same(`${at} list users ${n} ${a.request.object}#${a.request.relation}@${filter ?? ''} context ${JSON.stringify(a.context ?? {})}`, got, want(a, [...(a.expectation ?? [])].sort()));
    }
  }
  return out;
}
