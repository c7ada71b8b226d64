/**
 * @module admin/rpc/deps
 * What the admin service's handlers are built from, and the handler type checked against the
 * generated contract (`gatehouse.admin.v1.AdminService`).
 */
import type { AdminAccessStore, Authenticator } from '@gatehouse/auth';
import type { admin, BusEventName, BusEvents, ProtoServices } from '@gatehouse/contracts';
import type { ClientOf, HandlersOf } from '@gatehouse/rpc';
import type { AdminMetaOptions } from '../domain/admin-meta.ts';

/** authn's internal API, for the Meta half of AdminMeta. */
export type AuthnMetaClient = Pick<ClientOf<ProtoServices['gatehouse.authn.v1.AuthnInternal']>, 'GetMeta'>;

export interface AdminRpcDeps {
  /** the deployment's credential resolution (null: every admin RPC answers 401) */
  authenticator: Authenticator | null;
  /** admin sessions and the admin-secret failure log, shared with every service (libs/auth) */
  store: AdminAccessStore;
  /** `--admin-secret` */
  adminSecret: string;
  /** `--admin-cookie-secure` */
  adminCookieSecure: boolean;
  /** the flags AdminMeta reports */
  meta: AdminMetaOptions;
  /** null (split mode without --authn-address): AdminMeta answers `unavailable` */
  authn: AuthnMetaClient | null;
  /**
   * Publishes one bus event after the change it records (audit rows, behaviour.md §5.7). The admin
   * session lives in the session store, not in a database transaction, so there is no outbox to join;
   * a failure is logged and never fails the request.
   */
  emit<N extends BusEventName>(name: N, data: BusEvents[N]): void;
  /** Unix seconds */
  now(): number;
}

/** The handler of RPC `K` of `gatehouse.admin.v1.AdminService`. */
export type AdminHandler<K extends keyof admin.AdminService> = HandlersOf<admin.AdminService>[K];
