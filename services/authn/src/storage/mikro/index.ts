/**
 * @module @gatehouse/authn/storage/mikro
 * authn's MikroORM storage: the ServiceSchema to open the database with, and the repositories.
 */
import type { EntitySchema } from '@mikro-orm/core';
import type { Database, ServiceSchema } from '@gatehouse/db';
import type { SessionStore } from '@gatehouse/auth';
import type { LoginLockout, UserRepository } from '../ports.ts';
import { LoginFailureEntity, SessionEntity, UserEntity, VerificationRequestEntity } from './entities.ts';
import { createMikroLoginLockout } from './lockout.ts';
import { authnMigrations } from './migrations.ts';
import { createMikroSessionStore } from './sessions.ts';
import { createMikroUserRepository } from './users.ts';

/** Pass to `openDatabase(options, authnSchema, { logger })`. */
export const authnSchema: ServiceSchema = {
  service: 'authn',
  entities: [UserEntity, SessionEntity, LoginFailureEntity, VerificationRequestEntity] as unknown as EntitySchema<any, any>[],
  migrations: authnMigrations,
};

export interface MikroAuthnStorage {
  users: UserRepository;
  lockout: LoginLockout;
  /** the database SessionStore; use `createRedisSessionStore` instead when `--redis-url` is set */
  sessions: SessionStore;
}

/** Builds authn's storage on a Database opened with {@link authnSchema}. */
export function createMikroAuthnStorage(db: Database, options: { clock?: () => number } = {}): MikroAuthnStorage {
  return {
    users: createMikroUserRepository(db, options),
    lockout: createMikroLoginLockout(db),
    sessions: createMikroSessionStore(db, options),
  };
}

export { createMikroLoginLockout, createMikroSessionStore, createMikroUserRepository };
