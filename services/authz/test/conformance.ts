/** @module conformance: loads the YAML conformance cases and runs them against an engine over any store. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from '@jest/globals';
import { parse } from 'yaml';
import { AppError } from '@gatehouse/errors';
import { createEngine } from '../src/domain/index.ts';
import type { Engine, Tuple } from '../src/domain/index.ts';
import type { AuthzStore } from '../src/storage/ports.ts';

interface CheckCase {
  user: string;
  relation: string;
  object: string;
  contextual_tuples?: Tuple[];
  /** the check's condition context */
  context?: Record<string, unknown>;
  allowed?: boolean;
  error?: string;
}

/** Optional query extensions of list cases: contextual tuples, a condition context, an expected error. */
interface ListExtras {
  contextual_tuples?: Tuple[];
  context?: Record<string, unknown>;
  error?: string;
}

interface Stage {
  model?: string;
  model_error?: string;
  tuples?: Tuple[];
  checks?: CheckCase[];
  write_errors?: Array<{ tuple: Tuple; error: string }>;
  list_objects?: Array<{ user: string; relation: string; type: string; objects?: string[] } & ListExtras>;
  list_users?: Array<{ object: string; relation: string; user_type: string; users?: string[] } & ListExtras>;
  /** tuples read back (all of them, in write order), conditions included */
  read?: Tuple[];
  expand?: Array<{ object: string; relation: string; tree: unknown }>;
  tuple_count?: number;
}

/** One data file: a title, its source and stages applied in order to one store. */
export interface ConformanceCase {
  file: string;
  title: string;
  stages: Stage[];
}

const DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'conformance');

/** Every `test/conformance/*.yaml` file, parsed. */
export function loadCases(): ConformanceCase[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file) => ({ file, ...(parse(readFileSync(join(DIR, file), 'utf8')) as { title: string; stages: Stage[] }) }));
}

async function refusal(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

async function countTuples(engine: Engine): Promise<number> {
  let n = 0;
  let token: string | null = null;
  do {
    const page: { tuples: Tuple[]; continuation_token: string | null } = await engine.readTuples({ page_size: 100, continuation_token: token });
    n += page.tuples.length;
    token = page.continuation_token;
  } while (token);
  return n;
}

/**
 * `store` with its full loads held: a page read with no filter (what the engine's snapshot load reads)
 * waits until `release()`; `hold()` holds the next ones again. Reads of one object's or one user's
 * tuples, and everything else, go through.
 */
export function heldStore(store: AuthzStore): { store: AuthzStore; release(): void; hold(): void } {
  let release!: () => void;
  let gate!: Promise<void>;
  const hold = (): void => {
    gate = new Promise<void>((resolve) => (release = resolve));
  };
  hold();
  return {
    store: {
      ...store,
      readPage: async (filter, afterSeq, limit) => {
        if (Object.keys(filter).length === 0) await gate;
        return store.readPage(filter, afterSeq, limit);
      },
    },
    release: () => release(),
    hold,
  };
}

/**
 * Runs one case against a fresh engine on `store`. Each expectation names its stage and input in the failure.
 * With `partial`, the checks, list_objects, list_users and expand queries are asked of a second engine over
 * the same store whose full snapshot load is held open the whole case ({@link heldStore}), so each answers
 * from the store through the partial index (issue 22 §3, issue 38 §1); the case then also asserts that engine
 * never loaded its snapshot nor waited for it.
 */
export async function runCase(c: ConformanceCase, store: AuthzStore, options: { partial?: boolean } = {}): Promise<void> {
  if (!options.partial) return runCaseOn(c, createEngine({ store }));
  const held = heldStore(store);
  const checker = createEngine({ store: held.store });
  try {
    await runCaseOn(c, createEngine({ store }), undefined, checker);
    const checks = c.stages.reduce((n, s) => n + (s.checks?.length ?? 0), 0);
    const lists = c.stages.reduce((n, s) => n + (s.list_objects?.length ?? 0) + (s.list_users?.length ?? 0) + (s.expand?.length ?? 0), 0);
    expect({ file: c.file, ...checker.stats() }).toMatchObject({
      file: c.file, full_loads: 0, partial_waits: 0, ...(checks > 0 ? {} : { partial_checks: 0 }), ...(lists > 0 ? {} : { partial_lists: 0 }),
    });
    if (checks > 0) expect(checker.stats().partial_checks).toBeGreaterThan(0);
    if (lists > 0) expect(checker.stats().partial_lists).toBeGreaterThan(0);
  } finally {
    held.release();
  }
}

/**
 * Runs one case against any engine on an empty store (the embedded one, or the OpenFGA backend).
 * `sameMessage` decides whether a check refusal's message matches the expected one (default: equal);
 * `checker` is the engine the checks, lists and expands are asked of (default: `engine`, which makes every write).
 */
export async function runCaseOn(
  c: ConformanceCase,
  engine: Engine,
  sameMessage: (expected: string, got: string) => boolean = (a, b) => a === b,
  checker: Engine = engine,
): Promise<void> {
  for (const [i, stage] of c.stages.entries()) {
    const at = `${c.file} stage ${i + 1}`;
    if (stage.model !== undefined) {
      if (stage.model_error !== undefined) {
        const err = await refusal(engine.writeModel(stage.model));
        expect({ at, code: err.code, message: err.message }).toEqual({ at, code: 'invalid_argument', message: stage.model_error });
      } else await engine.writeModel(stage.model);
    }
    for (let k = 0; k < (stage.tuples?.length ?? 0); k += 100) await engine.writeTuples(stage.tuples!.slice(k, k + 100));
    for (const w of stage.write_errors ?? []) {
      const err = await refusal(engine.writeTuples([w.tuple]));
      expect({ at, tuple: w.tuple, code: err.code, message: err.message }).toEqual({ at, tuple: w.tuple, code: 'invalid_argument', message: w.error });
    }
    for (const ch of stage.checks ?? []) {
      const input = { relation: ch.relation, object: ch.object, contextual_tuples: ch.contextual_tuples, context: ch.context };
      if (ch.error !== undefined) {
        const err = await refusal(checker.check(ch.user, [input]));
        const message = sameMessage(ch.error, err.message) ? ch.error : err.message;
        expect({ at, ch, code: err.code, message }).toEqual({ at, ch, code: 'invalid_argument', message: ch.error });
      } else {
        const [result] = await checker.check(ch.user, [input]);
        expect({ at, ch, allowed: result?.allowed }).toEqual({ at, ch, allowed: ch.allowed });
      }
    }
    for (const lo of stage.list_objects ?? []) {
      const q = { relation: lo.relation, object_type: lo.type, contextual_tuples: lo.contextual_tuples, context: lo.context };
      if (lo.error !== undefined) {
        const err = await refusal(checker.listPermissions(lo.user, q));
        const message = sameMessage(lo.error, err.message) ? lo.error : err.message;
        expect({ at, lo, code: err.code, message }).toEqual({ at, lo, code: 'invalid_argument', message: lo.error });
        continue;
      }
      const { objects } = await checker.listPermissions(lo.user, q);
      expect({ at, lo, objects }).toEqual({ at, lo, objects: lo.objects });
    }
    for (const lu of stage.list_users ?? []) {
      if (lu.error !== undefined) {
        const err = await refusal(checker.listUsers(lu));
        const message = sameMessage(lu.error, err.message) ? lu.error : err.message;
        expect({ at, lu, code: err.code, message }).toEqual({ at, lu, code: 'invalid_argument', message: lu.error });
        continue;
      }
      const { users } = await checker.listUsers(lu);
      expect({ at, lu, users }).toEqual({ at, lu, users: lu.users });
    }
    if (stage.read !== undefined) {
      const { tuples } = await engine.readTuples({ page_size: 100 });
      expect({ at, tuples }).toEqual({ at, tuples: stage.read });
    }
    for (const ex of stage.expand ?? []) {
      const { tree } = await checker.expand(ex);
      expect({ at, ex: ex.object, tree: JSON.parse(tree) as unknown }).toEqual({ at, ex: ex.object, tree: ex.tree });
    }
    if (stage.tuple_count !== undefined) expect({ at, count: await countTuples(engine) }).toEqual({ at, count: stage.tuple_count });
  }
}

/**
 * Registers one test per data file for a backend. `open` returns an empty store and its disposer;
 * `partial` asks the checks, lists and expands through the partial index ({@link runCase}).
 */
export function describeConformance(backend: string, open: () => Promise<{ store: AuthzStore; close(): Promise<void> }>, options: { partial?: boolean } = {}): void {
  describe(`OpenFGA conformance data on ${backend}${options.partial ? ', queries through the partial index (full load held)' : ''}`, () => {
    for (const c of loadCases()) {
      it(`${c.title} (${c.file})`, async () => {
        const { store, close } = await open();
        try {
          await runCase(c, store, options);
        } finally {
          await close();
        }
      });
    }
  });
}
