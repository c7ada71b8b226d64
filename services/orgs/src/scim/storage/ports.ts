/**
 * @module orgs/scim/storage/ports
 * What SCIM stores in the orgs database (behaviour.md §6.4): the org's SCIM endpoint with the HMAC of
 * its token, the org-scoped SCIM view of a user (its `externalId`), and SCIM groups with their
 * member ids (mirrored from the authorization tuples orgs writes for them). Times are Unix seconds.
 */
import type { BusEventName } from '@gatehouse/contracts';

/** The org's SCIM endpoint; `tokenHash` is HMAC-SHA-256 (hex) of the token under --encryption-key. */
export interface ScimEndpointRecord {
  id: string;
  orgId: string;
  tokenHash: string;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** One element of a multi-valued attribute (`emails`, `phoneNumbers`; RFC 7643 §2.4). */
export interface ScimMultiValue {
  value: string;
  type: string | null;
  primary: boolean;
}

/**
 * A user as an org's SCIM client knows it (behaviour.md §6.4 "User mapping"): the org's projection of
 * the member, the rows lists and filters run on. Unique per (orgId, userId); `userName` is unique per
 * org case-insensitively. `userName` null: a member added outside SCIM whose attributes are not
 * projected yet (the SCIM server fills them from authn on first sight).
 */
export interface ScimUserRecord {
  orgId: string;
  userId: string;
  externalId: string | null;
  userName: string | null;
  givenName: string | null;
  familyName: string | null;
  displayName: string | null;
  emails: ScimMultiValue[];
  phoneNumbers: ScimMultiValue[];
  active: boolean;
  /** bumped by every change: `meta.version` is `W/"<version>"` (RFC 7644 §3.14) */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** An event written to orgs' outbox in the same transaction as the SCIM row it describes (`audit.recorded` included). */
export interface ScimOutboxEvent {
  name: BusEventName;
  data: unknown;
}

/** A parameterised SQL condition over the users table aliased `u` or the groups table aliased `g` (see ../filter.ts). */
export interface UserCondition {
  sql: string;
  params: unknown[];
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
    /** case-insensitive */
    byUserName(orgId: string, userName: string): Promise<ScimUserRecord | null>;
    /**
     * Inserts or replaces the (orgId, userId) row with its multi-valued children; false (nothing
     * written) when another user of the org holds the userName. `expectVersion`: write only when the
     * stored version is that one (false otherwise: a concurrent change). `events` are written to orgs'
     * outbox in the same transaction (nothing is written when the put answers false).
     */
    put(u: ScimUserRecord, expectVersion?: number, events?: readonly ScimOutboxEvent[]): Promise<boolean>;
    /** deletes the row and its children; `events` go to the outbox in the same transaction */
    delete(orgId: string, userId: string, events?: readonly ScimOutboxEvent[]): Promise<boolean>;
    /**
     * Forgets a deleted user (`user.deleted`) in every org: its rows and their children are deleted and its
     * id is taken out of every group's members, in one transaction. Idempotent. No outbox events: authz
     * drops the user's tuples on the same event.
     */
    forget(userId: string): Promise<void>;
    /** members not projected yet (userName null), at most `limit` user ids */
    unprojected(orgId: string, limit: number): Promise<string[]>;
    /**
     * One page of the org's projected users matching `where` (null: all), oldest first, and how many
     * match. `evaluate` is used instead of `where` on a database without SQL (MongoDB): the filter then
     * runs over the org's rows in memory.
     */
    search(orgId: string, where: UserCondition | null, evaluate: ((u: ScimUserRecord) => boolean) | null, page: { offset: number; limit: number }): Promise<{ total: number; rows: ScimUserRecord[] }>;
  };
  groups: {
    get(orgId: string, id: string): Promise<ScimGroupRecord | null>;
    byDisplayName(orgId: string, displayName: string): Promise<ScimGroupRecord | null>;
    byExternalId(orgId: string, externalId: string): Promise<ScimGroupRecord | null>;
    /** the org's groups whose members include `userId`, oldest first */
    holding(orgId: string, userId: string): Promise<ScimGroupRecord[]>;
    /** the org's groups, oldest first */
    list(orgId: string): Promise<ScimGroupRecord[]>;
    /** one page of the org's groups matching `where` (SQL over `orgs_scim_groups g`; null: all) or `evaluate` (MongoDB), oldest first */
    search(orgId: string, where: UserCondition | null, evaluate: ((g: ScimGroupRecord) => boolean) | null, page: { offset: number; limit: number }): Promise<{ total: number; rows: ScimGroupRecord[] }>;
    /** false (nothing written) when the display name is taken in the org */
    insert(g: ScimGroupRecord): Promise<boolean>;
    /** false when the new display name is taken by another group of the org */
    update(g: ScimGroupRecord): Promise<boolean>;
    delete(orgId: string, id: string): Promise<boolean>;
  };
}
