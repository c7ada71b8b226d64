/**
 * @module @gatehouse/authz/domain/org-groups
 * An organization's SCIM groups live in the engine as `group:<org_id>/<group_id>` (behaviour.md §6.4).
 * When orgs deletes an organization (`organization.deleted`, §6.1), the tuples naming one of its groups,
 * as object or as userset subject, go too.
 */
import type { Engine } from './engine.ts';
import type { Tuple } from './object-ref.ts';

const PAGE = 100;

/** Whether `ref` (`group:<org>/<id>` or `group:<org>/<id>#member`) names a group of the org. */
const ofOrg = (ref: string, prefix: string): boolean => ref.startsWith(prefix);

/**
 * Deletes every tuple whose object or user is a group of the organization.
 * Idempotent: a redelivered event finds nothing more. Reads the whole tuple set page by page (an org's
 * deletion is rare; the engine has no prefix index on users).
 * @returns how many tuples were deleted
 * @throws AppError `unavailable` when the store fails (the event is redelivered)
 */
export async function deleteOrgGroupTuples(engine: Pick<Engine, 'readTuples' | 'deleteTuples'>, orgId: string): Promise<number> {
  const prefix = `group:${orgId}/`;
  const doomed: Tuple[] = [];
  let token: string | null = null;
  do {
    const page: Awaited<ReturnType<Engine['readTuples']>> = await engine.readTuples({ page_size: PAGE, continuation_token: token });
    for (const t of page.tuples) if (ofOrg(t.object, prefix) || ofOrg(t.user, prefix)) doomed.push(t);
    token = page.continuation_token;
  } while (token);
  for (let i = 0; i < doomed.length; i += PAGE) await engine.deleteTuples(doomed.slice(i, i + PAGE));
  return doomed.length;
}
