/**
 * @module @gatehouse/authn/storage/mikro
 * authn's MikroORM storage: the ServiceSchema to open the database with, and the repositories.
 */
import type { EntitySchema } from '@mikro-orm/core';
import type { Database, ServiceSchema } from '@gatehouse/db';
import type { SessionStore } from '@gatehouse/auth';
import type { LoginLockout, OAuthStore, UserRepository } from '../ports.ts';
import { AuthorizationCodeEntity, ConsentGrantEntity, ConsentRequestEntity, DeviceAuthorizationEntity, IdentityLinkEntity, AttemptSlotEntity, OAuthClientEntity, SessionClientEntity, SessionEntity, TrustedIssuerEntity, UsedJtiEntity, UserEntity, VerificationRequestEntity } from './entities.ts';
import { createMikroOAuthStore } from './oauth.ts';
import { createMikroLoginLockout } from './lockout.ts';
import { authnMigrations } from './migrations.ts';
import { createMikroSessionStore } from './sessions.ts';
import { createMikroUserRepository } from './users.ts';

/** Pass to `openDatabase(options, authnSchema, { logger })`. */
export const authnSchema: ServiceSchema = {
  service: 'authn',
  entities: [UserEntity, SessionEntity, AttemptSlotEntity, VerificationRequestEntity, OAuthClientEntity, TrustedIssuerEntity, AuthorizationCodeEntity, UsedJtiEntity, IdentityLinkEntity, ConsentGrantEntity, ConsentRequestEntity, DeviceAuthorizationEntity, SessionClientEntity] as unknown as EntitySchema<any, any>[],
  migrations: authnMigrations,
};

export interface MikroAuthnStorage {
  users: UserRepository;
  lockout: LoginLockout;
  /** the database SessionStore; use `createRedisSessionStore` instead when `--redis-url` is set */
  sessions: SessionStore;
  /** OAuth clients, trusted issuers, authorization codes, used assertion jtis (issue 18) */
  oauth: OAuthStore;
}

/** Builds authn's storage on a Database opened with {@link authnSchema}. */
export function createMikroAuthnStorage(db: Database, options: { clock?: () => number } = {}): MikroAuthnStorage {
  return {
    users: createMikroUserRepository(db, options),
    lockout: createMikroLoginLockout(db),
    sessions: createMikroSessionStore(db, options),
    oauth: createMikroOAuthStore(db),
  };
}

export { createMikroLoginLockout, createMikroSessionStore, createMikroUserRepository };
