/**
 * @module @gatehouse/orgs/storage
 * What the orgs service stores for organizations, members and domains (behaviour.md §6.1, §6.2) and
 * the unit of work its writes run in. Implementation: MikroORM (SQLite, PostgreSQL, MySQL, MariaDB),
 * checked by ports.suite.ts. Times are Unix seconds.
 */

/** An organization (behaviour.md §6.1). `name` is unique. */
export interface OrganizationRecord {
  id: string;
  name: string;
  displayName: string | null;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

/** A membership (behaviour.md §6.1). Unique per (orgId, userId). */
export interface MemberRecord {
  id: string;
  orgId: string;
  userId: string;
  /** trimmed, de-duplicated, in the order given */
  roles: string[];
  createdAt: number;
  updatedAt: number;
}

/**
 * An org's domain entry (behaviour.md §6.2): pending (`verifiedAt` null, a challenge) or verified
 * (`challengeToken`/`challengeExpiresAt` null). Unique per (orgId, domain); at most one verified entry
 * per domain across all orgs (the store refuses a second: first verifier wins).
 */
export interface DomainRecord {
  orgId: string;
  /** normalised ASCII (IDNA) domain */
  domain: string;
  verifiedAt: number | null;
  challengeToken: string | null;
  challengeExpiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

import type { PageOf, PageWindow } from '@gatehouse/contracts/pagination';
import type { BusEventName } from '@gatehouse/contracts';

export type { PageOf, PageWindow };

/**
 * An event written to orgs' outbox in the same transaction as the row it describes (issue 32 §1):
 * a domain event (`user.provisioned`, `group.created`, …) or an `audit.recorded` row.
 */
export interface OutboxEvent {
  name: BusEventName;
  data: unknown;
}

/**
 * The outbox events (an audit row, issue 32 §1) a write stores with the record it writes, in the same
 * transaction; {@link noEvents} writes none.
 */
export type EventsOf<T> = (record: T) => OutboxEvent[];
/** No events. */
export const noEvents: EventsOf<unknown> = () => [];

/** A membership with its organization (user_organizations, §6.1). */
export interface MembershipOf {
  organization: OrganizationRecord;
  member: MemberRecord;
}

/** The per-org hourly counters of §6.2 / §10. */
export type DomainAttemptKind = 'request' | 'verify';

/** Writes of one transaction; they commit together with the events emitted through `events`. */
export interface OrgsTransaction {
  organizations: {
    /** false (nothing written) when the name is taken */
    insert(o: OrganizationRecord): Promise<boolean>;
    /** replaces the row; `conflict` when another org has the new name */
    update(o: OrganizationRecord): Promise<'updated' | 'missing' | 'conflict'>;
    /**
     * Deletes the organization and every org-scoped row (members, domains, attempts, and every
     * table registered with `registerOrgScopedTable` of mikro/schema.ts). false when it did not exist.
     */
    delete(id: string): Promise<boolean>;
    /** reads inside the transaction (locks nothing) */
    get(id: string): Promise<OrganizationRecord | null>;
  };
  members: {
    /** false (nothing written) when the user is already a member */
    insert(m: MemberRecord): Promise<boolean>;
    get(orgId: string, userId: string): Promise<MemberRecord | null>;
    /** false when there was no such membership */
    delete(orgId: string, userId: string): Promise<boolean>;
    /** replaces the roles and `updatedAt` of the (orgId, userId) membership; false when there is none */
    update(m: MemberRecord): Promise<boolean>;
    /** how many members hold `service:org_admin` */
    countAdmins(orgId: string): Promise<number>;
    /** deletes every membership of the user; returns their org ids */
    deleteUser(userId: string): Promise<string[]>;
  };
  domains: {
    /** inserts or replaces the (orgId, domain) entry */
    upsert(d: DomainRecord): Promise<void>;
    get(orgId: string, domain: string): Promise<DomainRecord | null>;
    /** the verified entry of a domain, any org */
    verified(domain: string): Promise<DomainRecord | null>;
    /**
     * Marks (orgId, domain) verified at `at` unless another org holds the domain verified; on success
     * removes every other org's pending entry for it. `lost`: another org's verification committed first.
     */
    markVerified(orgId: string, domain: string, at: number): Promise<'verified' | 'lost' | 'missing'>;
    /** false when there was no such entry */
    delete(orgId: string, domain: string): Promise<boolean>;
  };
  attempts: {
    /** records one attempt of `kind` for the org at `at` */
    record(orgId: string, kind: DomainAttemptKind, at: number): Promise<void>;
    /** attempts of `kind` at or after `since` */
    count(orgId: string, kind: DomainAttemptKind, since: number): Promise<number>;
  };
  /** writes an envelope to `orgs_outbox` in this transaction (ARCHITECTURE §4) */
  events: { emit(name: string, data: unknown): void };
}

export interface OrgsStore {
  organizations: {
    get(id: string): Promise<OrganizationRecord | null>;
    byName(name: string): Promise<OrganizationRecord | null>;
    /** newest first (created_at desc, then id) */
    list(page: PageWindow): Promise<PageOf<OrganizationRecord>>;
  };
  members: {
    get(orgId: string, userId: string): Promise<MemberRecord | null>;
    /**
     * Whether the user's membership in the org holds `service:org_admin` (the org-admin gate,
     * behaviour.md §5.1): one indexed lookup.
     */
    isOrgAdmin(userId: string, orgId: string): Promise<boolean>;
    /** newest first */
    list(orgId: string, page: PageWindow): Promise<PageOf<MemberRecord>>;
    /** the user's memberships with their organizations, newest membership first */
    ofUser(userId: string, page: PageWindow): Promise<PageOf<MembershipOf>>;
  };
  domains: {
    get(orgId: string, domain: string): Promise<DomainRecord | null>;
    /** the verified entry of a domain, any org (discovery lookup, §6.2) */
    verified(domain: string): Promise<DomainRecord | null>;
    /** the org's verified entries and pending ones whose challenge expires after `now`, newest first */
    list(orgId: string, now: number, page: PageWindow): Promise<PageOf<DomainRecord>>;
  };
  transaction<T>(fn: (tx: OrgsTransaction) => Promise<T>): Promise<T>;
}

/** The reserved role that makes a member an org admin (behaviour.md §6.1). */
export const ORG_ADMIN_ROLE = 'service:org_admin';
