/**
 * @module @gatehouse/orgs/domain/deps
 * What the orgs domain is built from. The domain is transport-free: it sees no call context or wire
 * message; rpc/ turns those into the values here (ARCHITECTURE §4).
 */
import type { OrgsStore, OrgsTransaction } from '../storage/ports.ts';

/** The fields of a user the orgs service shows beside a membership (OrgMember, behaviour.md §6.1). */
export interface UserSummary {
  id: string;
  email: string | null;
  givenName: string | null;
  familyName: string | null;
}

/** Users as authn owns them (read through `AuthnInternal.GetUser`). */
export interface UserDirectory {
  /**
   * @returns the user, or null when no user has this id
   * @throws AppError `unavailable` when authn cannot be reached
   */
  get(userId: string): Promise<UserSummary | null>;
}

/** What the orgs domain functions take. */
export interface OrgsDomainDeps {
  store: OrgsStore;
  users: UserDirectory;
  /** Unix seconds */
  now(): number;
}

/**
 * Writes further events in the transaction of a domain change, with its result (the rpc layer's
 * audit row, a SCIM event): they commit with the change or not at all.
 */
export type WithEvents<R> = (tx: OrgsTransaction, result: R) => void;
