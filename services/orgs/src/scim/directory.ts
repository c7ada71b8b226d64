/**
 * @module orgs/scim/directory
 * An {@link OrgDirectory} over the SCIM store alone, for a deployment whose orgs service does not
 * own organizations yet: every org id is `enabled` and the org's members are the users its SCIM
 * client provisioned. Replaced by the organizations store once it exists.
 */
import type { OrgDirectory } from './deps.ts';
import type { ScimStore } from './storage/ports.ts';

/** The directory of SCIM-provisioned members (see the module note). */
export function scimOnlyDirectory(store: ScimStore, now: () => number): OrgDirectory {
  return {
    status: () => Promise.resolve('enabled'),
    async isMember(orgId, userId) {
      return (await store.users.get(orgId, userId)) !== null;
    },
    async addMember(orgId, userId) {
      if (await store.users.get(orgId, userId)) return;
      await store.users.put({ orgId, userId, externalId: null, createdAt: now(), updatedAt: now() });
    },
    async memberIds(orgId) {
      return (await store.users.list(orgId)).map((u) => u.userId);
    },
  };
}
