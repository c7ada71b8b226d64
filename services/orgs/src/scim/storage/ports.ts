/**
 * @module orgs/scim/storage/ports
 * What SCIM stores in the orgs database (behaviour.md §6.4): the org's SCIM endpoint with the HMAC of
 * its token, the org-scoped SCIM view of a user (its `externalId`), and SCIM groups with their
 * member ids (mirrored from the authorization tuples orgs writes for them). Times are Unix seconds.
 */

/** The org's SCIM endpoint; `tokenHash` is HMAC-SHA-256 (hex) of the token under --encryption-key. */
export interface ScimEndpointRecord {
  id: string;
  orgId: string;
  tokenHash: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A user as an org's SCIM client knows it. Unique per (orgId, userId). */
export interface ScimUserRecord {
  orgId: string;
  userId: string;
  externalId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** A SCIM group of an org. `displayName` is unique per org (compared case-insensitively). */
export interface ScimGroupRecord {
  id: string;
  orgId: string;
  displayName: string;
  externalId: string | null;
  /** user ids, in the order added, without duplicates */
  memberIds: string[];
  createdAt: number;
  updatedAt: number;
}

export interface ScimStore {
  endpoints: {
    byOrg(orgId: string): Promise<ScimEndpointRecord | null>;
    byId(id: string): Promise<ScimEndpointRecord | null>;
    /** false (nothing written) when the org already has one */
    insert(e: ScimEndpointRecord): Promise<boolean>;
    update(e: ScimEndpointRecord): Promise<void>;
    /** false when there was none */
    delete(orgId: string): Promise<boolean>;
  };
  users: {
    get(orgId: string, userId: string): Promise<ScimUserRecord | null>;
    byExternalId(orgId: string, externalId: string): Promise<ScimUserRecord | null>;
    /** inserts or replaces the (orgId, userId) row */
    put(u: ScimUserRecord): Promise<void>;
    /** the org's rows, oldest first */
    list(orgId: string): Promise<ScimUserRecord[]>;
  };
  groups: {
    get(orgId: string, id: string): Promise<ScimGroupRecord | null>;
    byDisplayName(orgId: string, displayName: string): Promise<ScimGroupRecord | null>;
    byExternalId(orgId: string, externalId: string): Promise<ScimGroupRecord | null>;
    /** the org's groups, oldest first */
    list(orgId: string): Promise<ScimGroupRecord[]>;
    /** false (nothing written) when the display name is taken in the org */
    insert(g: ScimGroupRecord): Promise<boolean>;
    /** false when the new display name is taken by another group of the org */
    update(g: ScimGroupRecord): Promise<boolean>;
    delete(orgId: string, id: string): Promise<boolean>;
  };
}
