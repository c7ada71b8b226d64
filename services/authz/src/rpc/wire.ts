/** @module authz/rpc/wire: wire ↔ domain conversions shared by several authz RPCs. */
import type { authz } from '@gatehouse/contracts';
import type { Tuple } from '../domain/index.ts';

/**
 * The tuples of a WriteTuples / DeleteTuples request as domain tuples: an absent field becomes '', which
 * the engine refuses with `each tuple requires user, relation and object` (behaviour.md §7.1).
 */
export function toTuples(req: authz.TuplesRequest): Tuple[] {
  return req.tuples.map((t) => ({ user: t.user ?? '', relation: t.relation ?? '', object: t.object ?? '' }));
}
