/**
 * @module orgs/scim/storage/ports
 * What SCIM stores in the orgs database (behaviour.md §6.4): the org's SCIM endpoint with the HMAC of
 * its token, the org-scoped SCIM view of a user (its `externalId`), and SCIM groups with their
 * member ids (mirrored from the authorization tuples orgs writes for them). Times are Unix seconds.
 */
import type { OutboxEvent } from '../../storage/ports.ts';

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
export type ScimOutboxEvent = OutboxEvent;

/** A parameterised SQL condition over the users table aliased `u` or the groups table aliased `g` (see ../filter.ts). */
export interface UserCondition {
  sql: string;
  params: unknown[];
}

/**
 * A SCIM group of an org. `displayName` is unique per org (compared case-insensitively). Its members are
 * rows of their own (issue 31), read with `groups.members` only when an answer lists them.
 */
export interface ScimGroupRecord {
  id: string;
  orgId: string;
  displayName: string;
  externalId: string | null;
  /** bumped by every change: `meta.version` is `W/"<version>"` (RFC 7644 §3.14) */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** What a group write does to its member rows: user ids to take out (`all`: every one), then to add. */
export interface ScimMemberChange {
  remove: readonly string[] | 'all';
  add: readonly string[];
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
     * member rows go (their groups' versions bumped), in one transaction. Idempotent. No outbox events: authz
     * drops the user's tuples on the same event.
     */
    forget(userId: string): Promise<void>;
    /** those of `userIds` that are members of the org (one indexed query per 500 ids) */
    membersAmong(orgId: string, userIds: readonly string[]): Promise<Set<string>>;
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
    /** the member user ids of each of `groupIds` (of the org), in the order added; a group without members maps to [] */
    members(orgId: string, groupIds: readonly string[]): Promise<Map<string, string[]>>;
    /** those of `userIds` that are members of the group (one indexed query per 500 ids) */
    membersAmong(orgId: string, groupId: string, userIds: readonly string[]): Promise<Set<string>>;
    byDisplayName(orgId: string, displayName: string): Promise<ScimGroupRecord | null>;
    byExternalId(orgId: string, externalId: string): Promise<ScimGroupRecord | null>;
    /** the org's groups whose members include `userId`, oldest first */
    holding(orgId: string, userId: string): Promise<ScimGroupRecord[]>;
    /** the org's groups, oldest first */
    list(orgId: string): Promise<ScimGroupRecord[]>;
    /** one page of the org's groups matching `where` (SQL over `orgs_scim_groups g`; null: all) or `evaluate` (MongoDB), oldest first */
    search(orgId: string, where: UserCondition | null, evaluate: ((g: ScimGroupRecord) => boolean) | null, page: { offset: number; limit: number }): Promise<{ total: number; rows: ScimGroupRecord[] }>;
    /**
     * Stores the group and its members (`memberIds`, without duplicates, in that order): false (nothing
     * written) when the display name is taken in the org; `events` (`group.created`) go to orgs' outbox in
     * the same transaction (issue 32 §1)
     */
    insert(g: ScimGroupRecord, memberIds?: readonly string[], events?: readonly ScimOutboxEvent[]): Promise<boolean>;
    /**
     * Writes `g` over the stored group and applies `change` to its member rows (`remove` first, `all` for
     * every member; then `add`, already-present ids ignored), in one transaction: `taken` (nothing
     * written) when the new display name is taken by another group of the org; `stale` (nothing written)
     * when `expectVersion` is given and the stored version is another (a concurrent change, RFC 7644
     * §3.14); `events` as for insert
     */
    update(g: ScimGroupRecord, change?: ScimMemberChange, events?: readonly ScimOutboxEvent[], expectVersion?: number): Promise<'updated' | 'taken' | 'stale'>;
    /** false when there was none (its events are then not written either); its member rows go with it; `events` as for insert */
    delete(orgId: string, id: string, events?: readonly ScimOutboxEvent[]): Promise<boolean>;
  };
}
