/**
 * @module orgs/scim/deps
 * What the SCIM server and the SCIM endpoint administration need (behaviour.md §6.4): their store,
 * the org directory (organizations and memberships, owned by orgs), authn's user rows and authz's
 * tuples (typed internal clients), the event sink, the HMAC key of tokens, the clock and `--url`.
 */
import type { KeyRing } from '@gatehouse/crypto';
import type { ClientOf } from '@gatehouse/rpc';
import type { ProtoServices } from '@gatehouse/contracts';
import type { ScimStore } from './storage/ports.ts';

/** The organizations and memberships SCIM relies on (behaviour.md §6.1). */
export interface OrgDirectory {
  /** `missing` for an unknown org; `disabled` refuses SCIM (§6.1 update_organization) */
  status(orgId: string): Promise<'enabled' | 'disabled' | 'missing'>;
  isMember(orgId: string, userId: string): Promise<boolean>;
  /** adds the user with no roles; a no-op for a member */
  addMember(orgId: string, userId: string): Promise<void>;
  /** removes the membership; a no-op for a non-member */
  removeMember(orgId: string, userId: string): Promise<void>;
}

export type AuthnInternalClient = Pick<ClientOf<ProtoServices['gatehouse.authn.v1.AuthnInternal']>, 'ProvisionUser' | 'FindUsers' | 'UpdateProvisionedUser' | 'SetUserActive'>;
export type AuthzInternalClient = Pick<ClientOf<ProtoServices['gatehouse.authz.v1.AuthzInternal']>, 'GetModel' | 'WriteTuples' | 'DeleteTuples'>;

/** The SCIM events of behaviour.md §8. */
export type ScimEventName = 'user.provisioned' | 'user.deprovisioned' | 'user.scim_updated' | 'group.created' | 'group.updated' | 'group.deleted';

export interface ScimDeps {
  store: ScimStore;
  orgs: OrgDirectory;
  /** null: authn is not reachable (split mode without --authn-address): user operations answer 503 */
  authn: AuthnInternalClient | null;
  /** null: no authz address (split mode): group operations answer 501 */
  authz: AuthzInternalClient | null;
  /** HMAC-SHA-256 key(s) of the stored token digests: the ring of --encryption-key (or one key derived from --client-secret) */
  tokenKey: string | KeyRing;
  /** `--url` without a trailing slash: `meta.location` is `<url>/scim/v2/<Resource>/<id>` */
  baseUrl: string;
  /** Unix seconds */
  now(): number;
}
