/**
 * @module orgs/scim/directory
 * The {@link OrgDirectory} of SCIM on the organizations store (behaviour.md §6.1): an org's status
 * (a disabled org refuses SCIM), its memberships, and the membership with no roles that a SCIM create
 * adds (§6.4 "Create user").
 */
import { randomUUID } from 'node:crypto';
import type { OrgsStore } from '../storage/ports.ts';
import type { OrgDirectory } from './deps.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The directory over `store`; `now` is Unix seconds. */
export function orgDirectory(store: OrgsStore, now: () => number): OrgDirectory {
  return {
    async status(orgId) {
      const org = UUID.test(orgId) ? await store.organizations.get(orgId) : null;
      if (!org) return 'missing';
      return org.enabled ? 'enabled' : 'disabled';
    },
    async isMember(orgId, userId) {
      return (await store.members.get(orgId, userId)) !== null;
    },
    async addMember(orgId, userId) {
      const at = now();
      // insert answers false for an existing member: adding is idempotent
      await store.transaction((tx) => tx.members.insert({ id: randomUUID(), orgId, userId, roles: [], createdAt: at, updatedAt: at }));
    },
    async removeMember(orgId, userId) {
      await store.transaction((tx) => tx.members.delete(orgId, userId));
    },
  };
}
