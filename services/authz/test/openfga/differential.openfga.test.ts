/**
 * @module authz/test/openfga/differential.openfga.test
 * The differential test (issue 21): seeded, generated models and tuple sets (test/openfga/differential.ts)
 * answered by Gatehouse's engine (src/domain, over the memory store) and by a real OpenFGA server
 * (through @openfga/sdk directly, not through the backend). Every check (each subject × object ×
 * relation, with no context, with every condition parameter, with some left out, and with conditioned
 * contextual tuples), every list objects (subject × type × relation) and every list users (object ×
 * relation × `user` and `group#member`), each list with one of those contexts in turn and every other one
 * with the contextual tuples, must agree, errors included (compared as kinds: `resolution too complex`, a
 * condition-evaluation error, else the message; which of several failing conditions a call names depends
 * on the order OpenFGA's concurrent resolution meets them in, so the kind does not name it). A model one side refuses must be refused by the other. Two disagreements are
 * accepted, each only once OpenFGA itself confirms the engine's answer: a check OpenFGA answers both ways
 * ({@link fgaAlsoSays}), and an OpenFGA list that contradicts OpenFGA's Check ({@link listContradictsOwnCheck}).
 * Conditioned cases (issue 36 §3: conditions with int, double, string, bool, list, map and timestamp
 * parameters, contexts with missing and wrongly typed parameters, conditioned contextual tuples) run too:
 * {@link CONDITIONED_SEEDS} of them by default; `DIFF_CONDITIONS=1` runs only conditioned cases (see
 * {@link CONDITIONED}).
 * Size: {@link SEEDS} cases (about 45 s on the shared 2-core machine under a load average of 15; all 200 seeds
 * of `DIFF_SEEDS=1-200` agree, 145 s) plus {@link CONDITIONED_SEEDS} conditioned ones.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenFgaClient, FgaApiValidationError, type TupleKey } from '@openfga/sdk';
import { transformer } from '@openfga/syntax-transformer';
import { AppError } from '@gatehouse/errors';
import type { OpenFgaServer } from '@gatehouse/testing';
import { createEngine, type Engine } from '../../src/domain/index.ts';
import { createMemoryStore } from '../../src/storage/memory.ts';
import { generateCase, generateConditionedCase, type DiffCase } from './differential.ts';
import { startTestOpenFga } from './harness.ts';

/** Generated cases per run in `npm test` (seeds 1..SEEDS). */
const SEEDS = 80;

/**
 * The seeds to run: 1..{@link SEEDS}, or `DIFF_SEEDS` when set, a comma-separated list of seeds and
 * ranges (`DIFF_SEEDS=1-200`, `DIFF_SEEDS=53,75,130-131`) for exploring past the committed ones.
 */
function seeds(): number[] {
  // eslint-disable-next-line no-restricted-properties -- a test's exploration knob, not product configuration
  const spec = process.env.DIFF_SEEDS ?? `1-${SEEDS}`;
  return spec.split(',').flatMap((part) => {
    const [from, to = from] = part.trim().split('-').map(Number) as [number, number?];
    return Array.from({ length: to! - from + 1 }, (_, i) => from + i);
  });
}

/**
 * Whether the run generates conditioned cases only, list objects included ({@link generateConditionedCase}):
 * `DIFF_CONDITIONS=1`. Without it the run is the unconditioned cases plus {@link CONDITIONED_SEEDS}
 * conditioned ones, every answer compared: all of seeds 1-80 agree (`DIFF_CONDITIONS=1 DIFF_SEEDS=1-80`, 100 s
 * on the shared machine), list objects included since it reads per subject kind what OpenFGA reads, and all
 * of seeds 81-200 (`DIFF_CONDITIONS=1 DIFF_SEEDS=81-200`, 470 s under a load average of 20) since list objects
 * fails only on the condition errors of the reads OpenFGA makes toward the relation asked (seeds 113, 193) and
 * a check operand that fails reports no cycle (seed 120).
 */
// eslint-disable-next-line no-restricted-properties -- a test's exploration knob, not product configuration
const CONDITIONED = process.env.DIFF_CONDITIONS === '1';

/** Conditioned cases in the default run (seeds 1..CONDITIONED_SEEDS): checks, list objects and list users. */
const CONDITIONED_SEEDS = 40;

/** An answer or a refusal, comparable across the two implementations. */
type Answer = string;

/** An error as a comparable kind. */
function kindOf(message: string): Answer {
  if (/resolution too complex|resolution_too_complex|required too many rewrite rules/i.test(message)) return 'error: resolution too complex';
  if (/condition\W+'([^']+)'/.test(message)) return 'error: condition';
  return `error: ${message}`;
}

async function engineAnswer(work: () => Promise<unknown>): Promise<Answer> {
  try {
    return JSON.stringify(await work()) ?? 'ok';
  } catch (err) {
    if (err instanceof AppError) return kindOf(err.message);
    throw err;
  }
}

async function fgaAnswer(work: () => Promise<unknown>): Promise<Answer> {
  try {
    return JSON.stringify(await work()) ?? 'ok';
  } catch (err) {
    if (err instanceof FgaApiValidationError) return kindOf(`${err.apiErrorCode} ${err.apiErrorMessage ?? ''}`);
    throw err;
  }
}

const keyOf = (t: DiffCase['tuples'][number]): TupleKey => ({
  user: t.user, relation: t.relation, object: t.object, ...(t.condition ? { condition: { name: t.condition.name, context: t.condition.context ?? {} } } : {}),
});

/**
 * Whether a list disagreement is OpenFGA's list contradicting OpenFGA's own Check: every element in one
 * answer and not the other is one OpenFGA's Check (same model, tuples and context) puts on the engine's
 * side. OpenFGA's ListObjects and ListUsers walk the graph with their own algorithms, which differ from its
 * Check in two documented ways: ListUsers lists a concrete user only along a path that names it, so users
 * granted only through `user:*` are left out ("it cannot be inferred that all subjects of that type have a
 * relation", openfga.dev API docs, ListUsers), and both list APIs drop the base of a `but not` whose subtracted
 * side meets a cycle in their expansion (openfga/openfga#1573), where Check resolves nested groups with its
 * recursive strategy and finds no cycle. The engine answers its lists by Check, so there it agrees with
 * OpenFGA's Check and not with OpenFGA's list. Accepted only when both sides answered (no error) and
 * OpenFGA's Check confirms every differing element ({@link fgaAlsoSays}).
 */
async function listContradictsOwnCheck(
  client: OpenFgaClient, opts: { authorizationModelId: string }, mine: Answer, theirs: Answer,
  checkOf: (element: string) => { user: string; relation: string; object: string },
  context: Record<string, unknown>,
  contextualTuples: TupleKey[],
): Promise<boolean> {
  if (mine.startsWith('error:') || theirs.startsWith('error:')) return false;
  const a = new Set(JSON.parse(mine) as string[]);
  const b = new Set(JSON.parse(theirs) as string[]);
  const differing = [...a, ...b].filter((x) => a.has(x) !== b.has(x));
  for (const element of differing) {
    if (!(await fgaAlsoSays(client, opts, { ...checkOf(element), context, contextualTuples }, a.has(element)))) return false;
  }
  return true;
}

/** Times OpenFGA is asked again before a check disagreement counts ({@link fgaAlsoSays}). */
const REASKS = 20;

/**
 * Whether OpenFGA's Check, asked `check` again up to {@link REASKS} times, answers `allowed` at least once.
 * OpenFGA's Check is not deterministic where an intersection sits on the subtracted side of `but not`: its
 * intersection reducer runs the operands concurrently and returns the first that is false or reports a
 * cycle (internal/graph/check.go `intersection`, v1.22.1), so for `x but not (a and b)` where `a` is false
 * and `b` is false after cutting a cycle, the exclusion holds when `b` finishes first and not when `a` does
 * (differential seed 53: `r0 but not (cond_viewer and inherited from parent)`, about one run in six).
 * The engine evaluates operands in order, deterministically; a check disagreement is accepted only when
 * OpenFGA is seen to give the engine's answer too.
 */
async function fgaAlsoSays(
  client: OpenFgaClient, opts: { authorizationModelId: string },
  check: { user: string; relation: string; object: string; context?: Record<string, unknown>; contextualTuples?: TupleKey[] }, allowed: boolean,
): Promise<boolean> {
  for (let i = 0; i < REASKS; i++) {
    if ((await client.check(check, opts)).allowed === allowed) return true;
  }
  return false;
}

/**
 * Runs one case on both; returns the disagreements as readable lines. `listObjects` false leaves list objects
 * out (the conditioned cases of the default run, see {@link CONDITIONED_SEEDS}).
 */
async function compare(server: OpenFgaServer, c: DiffCase, listObjects = true): Promise<string[]> {
  const out: string[] = [];
  const engine: Engine = createEngine({ store: createMemoryStore() });
  const admin = new OpenFgaClient({ apiUrl: server.url });
  const { id: storeId } = await admin.createStore({ name: `diff-${c.seed}` });
  const client = new OpenFgaClient({ apiUrl: server.url, storeId });

  const engineModel = await engineAnswer(() => engine.writeModel(c.dsl));
  let modelId = '';
  let json: unknown;
  try {
    json = transformer.transformDSLToJSONObject(c.dsl);
  } catch (err) {
    json = null; // OpenFGA takes JSON: a DSL its own transformer cannot parse is refused before the server
    if (!engineModel.startsWith('error:')) return [`seed ${c.seed}: the engine accepted a DSL OpenFGA's transformer refuses: ${(err as Error).message}`];
    return [];
  }
  const fgaModel = await fgaAnswer(async () => {
    modelId = (await client.writeAuthorizationModel(json as never)).authorization_model_id;
  });
  const engineRefused = engineModel.startsWith('error:');
  const fgaRefused = fgaModel.startsWith('error:');
  if (engineRefused !== fgaRefused) return [`seed ${c.seed}: model ${engineRefused ? 'refused' : 'accepted'} by the engine (${engineModel}), ${fgaRefused ? 'refused' : 'accepted'} by OpenFGA (${fgaModel})`];
  if (engineRefused) return [];

  // the tuples the engine's model allows, written to both
  const kept: DiffCase['tuples'] = [];
  for (const t of c.tuples) {
    try {
      await engine.writeTuples([t]);
      kept.push(t);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
    }
  }
  for (let i = 0; i < kept.length; i += 100) {
    const w = await fgaAnswer(() => client.write({ writes: kept.slice(i, i + 100).map(keyOf) }, { authorizationModelId: modelId, conflict: { onDuplicateWrites: 'ignore' as never } }));
    if (w.startsWith('error:')) out.push(`seed ${c.seed}: OpenFGA refused tuples the engine accepted: ${w}`);
  }
  const opts = { authorizationModelId: modelId };

  // checks: per subject and context, one OpenFGA BatchCheck; the engine one check per call (a refusal fails a whole engine batch)
  const contextual = c.contextual.map(keyOf);
  const rounds: Array<{ label: string; context?: Record<string, unknown>; contextual: boolean }> = [
    { label: '', contextual: false },
    { label: ' (with context)', context: c.contexts[1], contextual: false },
    ...(c.contexts[2] ? [{ label: ' (some parameters)', context: c.contexts[2], contextual: false }] : []),
    ...(c.contextual.length > 0 ? [{ label: ' (with context and contextual tuples)', context: c.contexts[1], contextual: true }] : []),
  ];
  for (const round of rounds) {
    const { context } = round;
    const ctxTuples = round.contextual ? contextual : [];
    for (const user of c.subjects) {
      const items = Object.entries(c.relations).flatMap(([type, rels]) => c.objects[type]!.flatMap((object) => rels.map((relation) => ({ object, relation }))));
      const res = await client.batchCheck({ checks: items.map((q, i) => ({ user, relation: q.relation, object: q.object, correlationId: String(i), ...(context ? { context } : {}), ...(round.contextual ? { contextualTuples: { tuple_keys: ctxTuples } } : {}) })) }, opts);
      const fgaBy = new Map(res.result.map((r) => [Number(r.correlationId), r.error ? kindOf(`${r.error.input_error ?? ''} ${r.error.message ?? ''}`) : JSON.stringify(r.allowed)]));
      for (const [i, q] of items.entries()) {
        const mine = await engineAnswer(async () => (await engine.check(user, [{ relation: q.relation, object: q.object, ...(round.contextual ? { contextual_tuples: c.contextual } : {}) }], context ? { context } : undefined))[0]!.allowed);
        const theirs = fgaBy.get(i);
        if (mine === theirs) continue;
        if ((mine === 'true' || mine === 'false') && (theirs === 'true' || theirs === 'false')
          && await fgaAlsoSays(client, opts, { user, relation: q.relation, object: q.object, ...(context ? { context } : {}), contextualTuples: ctxTuples }, mine === 'true')) continue;
        out.push(`seed ${c.seed}: check ${user} ${q.relation} ${q.object}${round.label}${context ? ` ${JSON.stringify(context)}` : ''}: engine ${mine}, OpenFGA ${theirs}`);
      }
    }
  }

  /** The context and contextual tuples of the `k`th list query: the contexts in turn, every other one with the contextual tuples. */
  let k = 0;
  const listInput = (): { context: Record<string, unknown>; contextualTuples: TupleKey[]; engineTuples: DiffCase['contextual']; label: string } => {
    const context = c.listContexts[k % c.listContexts.length]!;
    const withTuples = k % 2 === 1 && c.contextual.length > 0;
    k += 1;
    return { context, contextualTuples: withTuples ? contextual : [], engineTuples: withTuples ? c.contextual : [], label: c.listContexts.length > 1 ? ` context ${JSON.stringify(context)}${withTuples ? ' with contextual tuples' : ''}` : '' };
  };

  // list objects: subject × type × relation, with the context
  for (const user of listObjects ? c.subjects : []) {
    for (const [type, rels] of Object.entries(c.relations)) {
      for (const relation of rels) {
        const q = listInput();
        const mine = await engineAnswer(async () => (await engine.listPermissions(user, { relation, object_type: type, context: q.context, contextual_tuples: q.engineTuples })).objects);
        const theirs = await fgaAnswer(async () => (await client.listObjects({ user, relation, type, context: q.context, contextualTuples: q.contextualTuples }, opts)).objects.sort());
        if (mine !== theirs && !(await listContradictsOwnCheck(client, opts, mine, theirs, (object) => ({ user, relation, object }), q.context, q.contextualTuples))) {
          out.push(`seed ${c.seed}: list objects ${user} ${relation} ${type}${q.label}: engine ${mine}, OpenFGA ${theirs}`);
        }
      }
    }
  }

  // list users: object × relation × (user | group#member), with the context
  for (const [type, rels] of Object.entries(c.relations)) {
    for (const object of c.objects[type]!) {
      for (const relation of rels) {
        for (const filter of [{ type: 'user' }, { type: 'group', relation: 'member' }]) {
          const userType = filter.relation ? `${filter.type}#${filter.relation}` : filter.type;
          const q = listInput();
          const mine = await engineAnswer(async () => (await engine.listUsers({ object, relation, user_type: userType, context: q.context, contextual_tuples: q.engineTuples })).users);
          const theirs = await fgaAnswer(async () => {
            const [t, id] = object.split(':') as [string, string];
            const res = await client.listUsers({ object: { type: t, id }, relation, user_filters: [filter], context: q.context, contextualTuples: q.contextualTuples }, opts);
            return res.users.map((u) => (u.object ? `${u.object.type}:${u.object.id}` : u.wildcard ? `${u.wildcard.type}:*` : `${u.userset!.type}:${u.userset!.id}#${u.userset!.relation}`)).sort();
          });
          if (mine !== theirs && !(await listContradictsOwnCheck(client, opts, mine, theirs, (user) => ({ user, relation, object }), q.context, q.contextualTuples))) {
            out.push(`seed ${c.seed}: list users ${object} ${relation} ${userType}${q.label}: engine ${mine}, OpenFGA ${theirs}`);
          }
        }
      }
    }
  }
  return out;
}

let server: OpenFgaServer;
beforeAll(async () => { server = await startTestOpenFga(); }, 60_000);
afterAll(async () => { await server?.stop(); });

describe('differential: the embedded engine and a real OpenFGA server answer generated models alike', () => {
  for (const seed of seeds()) {
    it(`seed ${seed}: every check, list objects and list users answer agrees`, async () => {
      const disagreements = await compare(server, CONDITIONED ? generateConditionedCase(seed) : generateCase(seed));
      expect(disagreements).toEqual([]);
    }, 60_000);
  }
  // eslint-disable-next-line no-restricted-properties -- a test's exploration knob, not product configuration
  const conditioned = CONDITIONED || process.env.DIFF_SEEDS !== undefined ? [] : Array.from({ length: CONDITIONED_SEEDS }, (_, i) => i + 1);
  for (const seed of conditioned) {
    it(`conditioned seed ${seed}: every check, list objects and list users answer agrees (conditions, missing and wrongly typed parameters, conditioned contextual tuples)`, async () => {
      expect(await compare(server, generateConditionedCase(seed))).toEqual([]);
    }, 60_000);
  }
});
