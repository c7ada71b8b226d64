/**
 * @module orgs/main
 * The only file that wires orgs: flags → database (migrations) → store → handlers and subgraph; authn's
 * internal API for the users behind memberships, and authz's for SCIM group tuples; the SCIM store and
 * its events (`user.provisioned`, …, `group.*`), written to the outbox with each write; the SAML IdP's
 * store and sealing key (samlidp/, behaviour.md §5.9); the DNS resolver of domain verification
 * (`--dns-resolver`); the outbox relay that publishes its audit rows and `organization.deleted`; the
 * retention sweeper (issue 23); and the
 * durable `user.deleted` consumer that drops a deleted user's memberships. `buildOrgs` is the module's
 * build (src/index.ts), the same in all-in-one and split mode.
 */
import { consumeUserDeleted, newEnvelope } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { databaseOptionsOf, databaseReadiness, openDatabase, resealColumns, startOutboxRelay, startResealer, startSweeper, type ResealCount } from '@gatehouse/db';
import { orgsKeys, orgsSealedColumns } from './keys.ts';
import { AppError } from '@gatehouse/errors';
import { bindResolvers, buildSubgraph, createCallContext, fatal, orFatal } from '@gatehouse/rpc';
import type { PeerClient, ServiceRuntime, ServiceShared } from '@gatehouse/service';
import { createTxtResolver } from './dns.ts';
import type { UserDirectory } from './domain/deps.ts';
import type { TxtResolver } from './domain/domains.ts';
import { forgetUser } from './domain/members.ts';
import { orgsBindings } from './graphql/resolvers.ts';
import { orgsTypeDefs } from './graphql/schema.ts';
import { createOrgsService } from './service.ts';
import { ORGS_RETENTION } from './storage/mikro/retention.ts';
import { orgsSchema, registerOrgScopedTable } from './storage/mikro/schema.ts';
import { createMikroOrgsStore } from './storage/mikro/store.ts';
import { orgDirectory } from './scim/directory.ts';
import { ScimEndpointEntity, ScimGroupEntity, ScimGroupMemberEntity, ScimUserEntity, ScimUserValueEntity, scimEntities, scimGroupMembersMigration, scimGroupVersionMigration, scimMigration, scimProjectionMigration } from './scim/storage/schema.ts';
import { createMikroScimStore } from './scim/storage/store.ts';
import { orgIdpDirectory } from './samlidp/directory.ts';
import {
  SamlIdpKeyEntity, SamlIdpLogoutEntity, SamlIdpParticipantEntity, SamlServiceProviderEntity, samlIdpEntities, samlIdpMigration, samlIdpSingleLogoutMigration, samlIdpSpSettingsMigration,
} from './samlidp/storage/schema.ts';
import { SAML_IDP_RETENTION } from './samlidp/storage/retention.ts';
import { createMikroSamlIdpStore } from './samlidp/storage/store.ts';
import { OidcConnectionEntity, SamlAssertionEntity, SamlConnectionEntity, SsoPendingEntity, samlSpKeyMigration, samlSpKeyRotationMigration, ssoEntities, ssoMigration } from './sso/storage/schema.ts';
import { SSO_RETENTION } from './sso/storage/retention.ts';
import { createMikroSsoStore } from './sso/storage/store.ts';
import type { FederatedCompletion } from './sso/flows.ts';

// SCIM's (behaviour.md §6.4), SSO's (§6.3) and the SAML IdP's (§5.9) tables live in the orgs database
// and go with their organization (§6.1)
const schema = {
  ...orgsSchema,
  entities: [...orgsSchema.entities, ...scimEntities, ...ssoEntities, ...samlIdpEntities],
  migrations: [...orgsSchema.migrations, scimMigration, ssoMigration, samlIdpMigration, scimProjectionMigration, samlSpKeyMigration, samlIdpSpSettingsMigration, scimGroupVersionMigration, samlSpKeyRotationMigration, scimGroupMembersMigration, samlIdpSingleLogoutMigration],
};
for (const entity of [
  ScimEndpointEntity, ScimUserEntity, ScimUserValueEntity, ScimGroupEntity, ScimGroupMemberEntity, OidcConnectionEntity, SamlConnectionEntity, SsoPendingEntity, SamlAssertionEntity,
  SamlServiceProviderEntity, SamlIdpKeyEntity, SamlIdpParticipantEntity, SamlIdpLogoutEntity,
]) {
  registerOrgScopedTable({ entity: entity as never, orgProperty: 'orgId' });
}

/** Users through authn's internal API; without an authn address every lookup is `unavailable`. */
function userDirectory(authn: PeerClient<'authn.internal'> | null): UserDirectory {
  return {
    async get(userId) {
      if (!authn) throw new AppError('unavailable', 'authn service unavailable');
      try {
        const u = await authn.GetUser({ user_id: userId }, createCallContext());
        return { id: u.id, email: u.email ?? null, givenName: u.given_name ?? null, familyName: u.family_name ?? null };
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') return null;
        throw err;
      }
    },
  };
}

/** `roles` (comma list) and `scope` (space or comma list) of a login request, as authn takes them. */
const listOf = (v: string | undefined): string[] => (v ?? '').split(/[\s,]+/).filter(Boolean);

/**
 * authn's federated completion (`AuthnInternal.CompleteFederatedLogin`, issue 20): JIT creation,
 * linking by verified email, the §4.1 gate; its cookies come back on `ctx`. Without an authn address
 * (split mode) SSO logins answer 501.
 */
function federatedCompletion(authn: PeerClient<'authn.internal'> | null): FederatedCompletion | null {
  if (!authn) return null;
  return {
    async complete({ method, orgId, identity, params }, ctx) {
      const out = await authn.CompleteFederatedLogin({
        method, issuer: identity.issuer, subject: identity.subject, email: identity.email ?? undefined, email_verified: identity.emailVerified,
        given_name: identity.givenName ?? undefined, family_name: identity.familyName ?? undefined, redirect_uri: params.redirect_uri,
        state: params.state, roles: listOf(params.roles), scope: listOf(params.scope), org_id: orgId,
      }, ctx);
      return { redirectUrl: out.redirect_url, userId: out.user_id ?? null, created: out.created ?? false, error: out.error ?? null };
    },
  };
}

/** Builds orgs in this process; `shared.authenticator` checks its callers, `shared.bus` carries its events. */
export async function buildOrgs(config: Config, shared: ServiceShared): Promise<ServiceRuntime> {
  const logger = shared.logger.child({ service: 'orgs' });
  const dbOptions = databaseOptionsOf(config);
  let dns: TxtResolver;
  try {
    dns = createTxtResolver(config.dnsResolver ?? []);
  } catch (err) {
    fatal(`--dns-resolver must list ip:port addresses: ${(err as Error).message}`);
  }
  const db = await orFatal('database', () => openDatabase(dbOptions, schema, { logger }));
  const store = createMikroOrgsStore(db);
  const keys = orgsKeys(config);
  const authn = shared.peer('authn.internal');
  if (!authn) logger.warn('no --authn-address: adding members and listing them answer unavailable');
  const deps = {
    store, users: userDirectory(authn), dns, logger, authenticator: shared.authenticator,
    now: () => Math.floor(Date.now() / 1000),
  };
  const authz = shared.peer('authz.internal');
  if (!authz) logger.warn('no --authz-address: SCIM groups answer 501');
  // issue 32 §1: SCIM events, SCIM groups' events and the SAML IdP's admin audit rows are written by the
  // stores in the transaction of the row they describe; the audit rows of sign-ons (which change no row of
  // orgs') and of the SCIM endpoint admin calls go to orgs' outbox in a transaction of their own before
  // the answer. The relay takes them to the bus, so a bus outage loses none.
  const writing = new Set<Promise<void>>();
  const publish = (name: string, data: unknown): Promise<void> => {
    const envelope = newEnvelope(name as never, 'orgs', data as never);
    const write = db.transactional(async (em) => db.outbox.enqueue(em, envelope))
      .catch((err: unknown) => logger.error({ err, event: name, event_id: envelope.id }, 'event not recorded'))
      .finally(() => writing.delete(write));
    writing.add(write);
    return write;
  };
  const scimStore = createMikroScimStore(db);
  const service = createOrgsService(deps, {
    scim: {
      store: scimStore, orgs: orgDirectory(store, deps.now), authn, authz, now: deps.now,
      tokenKey: keys.scim,
      baseUrl: config.url.replace(/\/+$/, ''),
    },
    audit: (record) => publish('audit.recorded', record),
    logger,
  }, {
    sso: {
      store: createMikroSsoStore(db), orgs: store, now: deps.now, baseUrl: config.url.replace(/\/+$/, ''),
      // upstream client secrets: AES-256-GCM under --encryption-key (derived from --client-secret when absent, as the job seal key)
      secretKey: keys.sso,
    },
    completion: federatedCompletion(authn),
    addMember: orgDirectory(store, deps.now).addMember,
    audit: (record) => publish('audit.recorded', record),
    discoveryEnabled: config.enableOrgDiscovery,
    cookieSecure: config.appCookieSecure,
    logger,
  }, {
    store: createMikroSamlIdpStore(db), orgs: orgIdpDirectory(store), authn, authenticator: shared.authenticator,
    // the IdP's private keys at rest: AES-256-GCM under --encryption-key (or, without it, a key derived from --client-secret)
    sealKey: keys.samlIdp,
    baseUrl: config.url.replace(/\/+$/, ''),
    audit: (record) => publish('audit.recorded', record),
    logger, now: deps.now,
  });
  const relay = shared.bus ? startOutboxRelay({ db, bus: shared.bus, logger }) : null;
  // issue 23: expired pending domains and old attempt counters go (storage/mikro/retention.ts); SQL only
  const sweeper = startSweeper({ db, rules: [...ORGS_RETENTION, ...SSO_RETENTION, ...SAML_IDP_RETENTION], logger, registry: shared.registry });
  // issue 32: values sealed under an older --encryption-key are sealed again under the first
  const resealer = startResealer({ db, columns: orgsSealedColumns(keys), logger });
  // behaviour.md §5.3 delete_user: a deleted user's memberships and SCIM rows go (issue 32 §3), also when
  // the event waited for us
  const forget = async (userId: string): Promise<void> => {
    await forgetUser(deps, userId);
    await scimStore.users.forget(userId.toLowerCase());
  };
  const userDeleted = shared.bus
    ? await consumeUserDeleted(shared.bus, { durable: 'orgs-user-deleted', forget, logger })
    : null;
  if (!shared.bus) logger.warn('no --nats-url: audit rows and organization.deleted wait in the outbox until a bus is configured');
  return {
    public: service.public,
    internal: service.internal,
    schema: () => buildSubgraph(orgsTypeDefs, bindResolvers(service.public.desc, service.public.handlers, orgsBindings)),
    readiness: [databaseReadiness(db, dbOptions)],
    async close() {
      await userDeleted?.stop();
      await Promise.allSettled([...writing]);
      await sweeper.stop();
      await resealer.stop();
      await relay?.stop();
      await db.close();
    },
  };
}

/**
 * `gatehouse reseal` for orgs (issue 32): one pass of the resealer over orgs' sealed columns on the
 * database of `config`, then closes it.
 * @returns per `<table>.<column>`, the values re-sealed and those no key of the ring opens
 */
export async function resealOrgs(config: Config, logger: ServiceShared['logger']): Promise<Record<string, ResealCount>> {
  const db = await openDatabase(databaseOptionsOf(config), schema, { logger });
  try {
    return await resealColumns(db, orgsSealedColumns(orgsKeys(config)));
  } finally {
    await db.close();
  }
}
