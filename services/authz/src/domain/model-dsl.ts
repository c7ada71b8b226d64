/** @module model-dsl: parses and validates an OpenFGA DSL model (schema 1.1) into its JSON form (behaviour.md §7.1). */
import { createRequire } from 'node:module';
import { AppError } from '@gatehouse/errors';
import type * as SyntaxTransformer from '@openfga/syntax-transformer';
import { compileConditions, type JsonCondition } from './condition.ts';

/**
 * OpenFGA's syntax transformer (its ANTLR parser, ≈ 3.5 MiB of heap), loaded by the first model parsed:
 * a process with no model installed never loads it (issue 22 §3). It is CommonJS, so the load is
 * synchronous and parseDsl stays so.
 */
const requireModule = createRequire(import.meta.url);
let syntax: typeof SyntaxTransformer | undefined;
const syntaxTransformer = (): typeof SyntaxTransformer => (syntax ??= requireModule('@openfga/syntax-transformer') as typeof SyntaxTransformer);

/** Largest accepted DSL text, in bytes (behaviour.md §7.1: at most 256 KiB). */
export const MAX_DSL_BYTES = 256 * 1024;

/** The JSON userset rewrite of one relation (OpenFGA `Userset`). */
export interface JsonUserset {
  this?: Record<string, never>;
  computedUserset?: { object?: string; relation?: string };
  tupleToUserset?: { tupleset: { relation?: string }; computedUserset: { relation?: string } };
  union?: { child: JsonUserset[] };
  intersection?: { child: JsonUserset[] };
  difference?: { base: JsonUserset; subtract: JsonUserset };
}

/** One entry of `directly_related_user_types`. */
export interface JsonRelationReference {
  type: string;
  relation?: string;
  wildcard?: Record<string, never>;
  condition?: string;
}

/** The JSON authorization model (OpenFGA `AuthorizationModel` without id). */
export interface JsonModel {
  schema_version: string;
  type_definitions: Array<{
    type: string;
    relations?: Record<string, JsonUserset>;
    metadata?: { relations?: Record<string, { directly_related_user_types?: JsonRelationReference[] }> } | null;
  }>;
  conditions?: Record<string, JsonCondition>;
}

interface SingleError {
  msg?: string;
  message?: string;
  line?: { start: number };
  column?: { start: number };
  metadata?: { symbol?: string; errorType?: string; type?: string; relation?: string };
}

function refusal(message: string): AppError {
  return new AppError('invalid_argument', message);
}

/** Maps the first validator error to the §7.1 messages. Line and column are reported 1-based. */
function describe(err: SingleError): string {
  const meta = err.metadata;
  const symbol = meta?.symbol ?? '';
  if (meta?.errorType === 'invalid-type') return `type "${symbol}" is not defined`;
  if (meta?.errorType === 'invalid-relation-type' && symbol.includes('#')) {
    const [type, relation] = symbol.split('#');
    return `relation "${relation}" is not defined on type "${type}"`;
  }
  if (meta?.errorType === 'missing-definition' && meta.type !== undefined && symbol !== '') {
    return `relation "${symbol}" is not defined on type "${meta.type}"`;
  }
  const notRelation = /^`([^`]+)` is not a valid relation for `([^`]+)`/.exec(err.msg ?? '');
  if (notRelation) return `relation "${notRelation[1]}" is not defined on type "${notRelation[2]}"`;
  if (meta?.errorType === 'condition-not-defined' && symbol !== '') return `condition "${symbol}" is not defined`;
  if (meta?.errorType === 'condition-not-used' && symbol !== '') return `condition "${symbol}" is defined but not used`;
  const line = (err.line?.start ?? 0) + 1;
  const column = (err.column?.start ?? 0) + 1;
  const reason = (err.msg ?? err.message ?? 'invalid model').trim();
  return `invalid authorization model: line ${line}, column ${column}: ${reason}`;
}

/** `with <condition>` on a type restriction, removed for the fallback validation. */
const WITH_CONDITION = /\s+with\s+[A-Za-z_][A-Za-z0-9_-]*/g;

/**
 * Runs the syntax-transformer's validator. Its checker crashes (a TypeError, not a validation error) on
 * some models whose tuple-to-userset relation has only conditioned types (`define parent: [folder with c]`,
 * `define viewer: viewer from parent`); such a model is validated again with the `with` clauses removed
 * (the condition references are checked by {@link parseDsl} itself), and an internal failure never
 * reaches the caller as text.
 * @throws AppError `invalid_argument`
 */
function validate(dsl: string): void {
  const firstError = (text: string, ignoreUnused: boolean): SingleError | 'crash' | null => {
    try {
      syntaxTransformer().validator.validateDSL(text);
      return null;
    } catch (err) {
      const errors = (err as { errors?: SingleError[] }).errors;
      if (!errors || errors.length === 0) return 'crash';
      return errors.find((e) => !ignoreUnused || e.metadata?.errorType !== 'condition-not-used') ?? null;
    }
  };
  let first = firstError(dsl, false);
  if (first === 'crash') {
    const stripped = dsl.split('\n').map((line) => (/^\s*define\s/.test(line) ? line.replace(/\[[^\]]*\]/g, (m) => m.replace(WITH_CONDITION, '')) : line)).join('\n');
    first = firstError(stripped, true);
  }
  if (first === 'crash') throw refusal('invalid authorization model: line 1, column 1: the model could not be validated');
  if (first !== null) throw refusal(describe(first));
}

/** The relations one rewrite names through computed usersets (`viewer`, `a or b`, `a but not b`: all of them). */
function computedNames(u: JsonUserset, out: string[]): string[] {
  if (u.computedUserset?.relation) out.push(u.computedUserset.relation);
  for (const c of u.union?.child ?? u.intersection?.child ?? []) computedNames(c, out);
  if (u.difference) {
    computedNames(u.difference.base, out);
    computedNames(u.difference.subtract, out);
  }
  return out;
}

/**
 * Refuses a model whose relations on one type name each other in a cycle through computed usersets,
 * whatever operator joins them (`define r0: r1`, `define r1: [user] but not r0`): OpenFGA's typesystem
 * refuses such a model (`an authorization model cannot contain a cycle`, its TypeSystem.HasCycle), since
 * no tuple can ever enter the cycle. Cycles through tuples (`[group#member]`, `x from parent`) are fine.
 * @throws AppError `invalid_argument` `invalid authorization model: relations on type "<t>" form a cycle: <r> → … → <r>`
 */
function refuseComputedCycles(model: JsonModel): void {
  for (const td of model.type_definitions) {
    const relations = td.relations ?? {};
    const edges = new Map(Object.entries(relations).map(([name, u]) => [name, computedNames(u, [])]));
    const done = new Set<string>();
    const path: string[] = [];
    const visit = (name: string): void => {
      const at = path.indexOf(name);
      if (at >= 0) {
        const cycle = [...path.slice(at), name].join(' → ');
        throw refusal(`invalid authorization model: relations on type "${td.type}" form a cycle: ${cycle}`);
      }
      if (done.has(name)) return;
      path.push(name);
      for (const next of edges.get(name) ?? []) visit(next);
      path.pop();
      done.add(name);
    };
    for (const name of edges.keys()) visit(name);
  }
}

/**
 * Validates DSL text and converts it to the JSON model.
 *
 * @param dsl OpenFGA DSL, schema 1.1, at most 256 KiB
 * @returns the JSON model (conditions compiled to check them; modules are refused)
 * @throws AppError `invalid_argument`: `dsl is required`, `authorization model too large: max 262144 bytes`,
 *   `invalid authorization model: line <l>, column <c>: <reason>`, `type "<t>" is not defined`,
 *   `relation "<r>" is not defined on type "<t>"`, `condition "<c>" is not defined`,
 *   `invalid authorization model: failed to compile expression on condition '<c>': <reason>`, `modules are not supported`,
 *   `invalid authorization model: relations on type "<t>" form a cycle: <r> → … → <r>`
 */
export function parseDsl(dsl: string): JsonModel {
  if (typeof dsl !== 'string' || dsl.trim() === '') throw refusal('dsl is required');
  if (Buffer.byteLength(dsl, 'utf8') > MAX_DSL_BYTES) {
    throw refusal(`authorization model too large: max ${MAX_DSL_BYTES} bytes`);
  }
  if (/^\s*(module|extend)\s/m.test(dsl)) throw refusal('modules are not supported');
  validate(dsl);
  const model = syntaxTransformer().transformer.transformDSLToJSONObject(dsl) as unknown as JsonModel;
  if (model.schema_version !== '1.1') {
    throw refusal(`invalid authorization model: line 1, column 1: schema version ${model.schema_version} is not supported, use 1.1`);
  }
  for (const td of model.type_definitions) {
    for (const rel of Object.values(td.metadata?.relations ?? {})) {
      for (const r of rel.directly_related_user_types ?? []) {
        if (r.condition && !model.conditions?.[r.condition]) throw refusal(`condition "${r.condition}" is not defined`);
      }
    }
  }
  refuseComputedCycles(model);
  try {
    compileConditions(model.conditions);
  } catch (err) {
    throw refusal(`invalid authorization model: ${(err as Error).message}`);
  }
  return model;
}
