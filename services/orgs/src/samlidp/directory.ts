/**
 * @module orgs/samlidp/directory
 * The {@link IdpOrgDirectory} of the SAML IdP on the organizations store (behaviour.md §6.1): the org
 * of a path (by name) or a record (by id), and whether a user is a member.
 */
import type { OrgsStore } from '../storage/ports.ts';
import type { IdpOrgDirectory } from './deps.ts';

/** The directory over `store`. */
export function orgIdpDirectory(store: OrgsStore): IdpOrgDirectory {
  return {
    get: (orgId) => store.organizations.get(orgId),
    byName: (name) => store.organizations.byName(name),
    isMember: async (orgId, userId) => (await store.members.get(orgId, userId)) !== null,
  };
}
