/**
 * @module admin/domain/admin-meta
 * AdminMeta (behaviour.md §5.2): every field of Meta (as authn serves it, so the two never disagree)
 * plus the admin-only view of the flags: roles, configured channels, social providers, the database,
 * the authorization engine, and (extension, issue 33 §1) the deployment mode and the event bus.
 */
import type { admin, authn } from '@gatehouse/contracts';

export const SOCIAL_PROVIDER_IDS = ['google', 'facebook', 'github', 'linkedin', 'apple', 'discord', 'twitter', 'microsoft', 'twitch', 'roblox'] as const;
type ProviderId = (typeof SOCIAL_PROVIDER_IDS)[number];

/** The flags AdminMeta reports (a slice of the Config). */
export type AdminMetaOptions = {
  roles: readonly string[];
  defaultRoles: readonly string[];
  protectedRoles: readonly string[];
  isEmailConfigured: boolean;
  isSmsConfigured: boolean;
  /** issue 33 §4: the development outbox stands in for a missing provider under `--env=development` */
  devOutbox?: { readonly email: boolean; readonly sms: boolean };
  databaseType: string;
  env: string;
  fga: { enabled: boolean; store: string | null };
  /** issue 33 §1: how the deployment runs; absent (unit fixtures) reads as all-in-one */
  deployment?: 'all-in-one' | 'split';
  /** `--nats-url`: events over NATS JetStream; absent, over the in-process bus */
  natsUrl?: string | undefined;
} & { [K in `${ProviderId}ClientId` | `${ProviderId}ClientSecret`]?: string | undefined }
  & { [K in `${ProviderId}Scopes`]: readonly string[] };

/**
 * @param meta authn's Meta (the first 26 fields, unchanged)
 * @returns AdminMeta, every field non-null; `env` is `development` or `production` (any other `--env`
 *   behaves as production, behaviour.md §1.3); `authorization_engine.model_id` is null: the active
 *   model is authz's and is read with `GET /v1/admin/fga/model`
 */
export function adminMeta(meta: authn.Meta, o: AdminMetaOptions): admin.AdminMeta {
  return {
    ...meta,
    roles: [...o.roles],
    default_roles: [...o.defaultRoles],
    protected_roles: [...o.protectedRoles],
    is_multi_factor_auth_service_enabled: meta.is_multi_factor_auth_enabled,
    is_email_service_enabled: o.isEmailConfigured || o.devOutbox?.email === true,
    is_sms_service_enabled: o.isSmsConfigured || o.devOutbox?.sms === true,
    social_providers: SOCIAL_PROVIDER_IDS.map((p) => {
      const id = Boolean(o[`${p}ClientId`]);
      const secret = Boolean(o[`${p}ClientSecret`]);
      return { provider: p, is_enabled: id && secret, has_client_id: id, has_client_secret: secret, scopes: [...o[`${p}Scopes`]] };
    }),
    database_type: o.databaseType,
    authorization_engine: { is_enabled: o.fga.enabled, store: o.fga.enabled ? o.fga.store : null, model_id: null },
    env: o.env === 'development' ? 'development' : 'production',
    deployment: o.deployment ?? 'all-in-one',
    bus: o.natsUrl ? 'nats' : 'in-process',
  };
}
