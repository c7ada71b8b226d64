/** @module authz/rpc/wire: wire ↔ domain conversions shared by several authz RPCs. */
import type { authz } from '@gatehouse/contracts';
import type { Tuple } from '../domain/index.ts';

/**
 * The tuples of a WriteTuples / DeleteTuples request as domain tuples: an absent field becomes '', which
 * the engine refuses with `each tuple requires user, relation and object` (behaviour.md §7.1).
 */
export function toTuples(req: authz.TuplesRequest): Tuple[] {
  return req.tuples.map(toTuple);
}

/**
 * One wire tuple as a domain tuple; its optional condition (extension) keeps its name and context as
 * sent (the engine validates them: `condition requires a name`, a JSON-object context).
 */
export function toTuple(t: authz.Tuple): Tuple {
  const tuple: Tuple = { user: t.user ?? '', relation: t.relation ?? '', object: t.object ?? '' };
  if (t.condition) tuple.condition = { name: t.condition.name ?? '', context: t.condition.context ?? null };
  return tuple;
}

/** The audited resource of a tuple batch: `<object>#<relation>@<user>` for one tuple, else `batch` (behaviour.md §5.7). */
export function tupleResource(tuples: ReadonlyArray<{ object: string; relation: string; user: string }>): string {
  return tuples.length === 1 ? `${tuples[0]!.object}#${tuples[0]!.relation}@${tuples[0]!.user}` : 'batch';
}
