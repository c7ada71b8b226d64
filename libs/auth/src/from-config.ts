/**
 * @module @gatehouse/auth/from-config
 * Builds the token signer/verifier and the authenticator every service needs from the startup
 * flags, so each `main` wires credential resolution the same way (ARCHITECTURE §2).
 */
import type { Config } from '@gatehouse/config';
import { createJwtSigner, type JwtSigner, type JwtSignerOptions, type JwtType } from '@gatehouse/crypto';
import { createAuthenticator, type Authenticator } from './authenticator.ts';
import type { SessionStore } from './session-store.ts';
import { sha256Hex } from '@gatehouse/crypto';
import { adminAccessStoreFor } from './admin-access.ts';

/** The `--jwt-*` flags as signer options (behaviour.md §1.2 secondary key for rotation). */
export function jwtOptionsOf(config: Config): JwtSignerOptions {
  const opts: JwtSignerOptions = {
    type: config.jwtType as JwtType,
    ...(config.jwtSecret ? { secret: config.jwtSecret } : {}),
    ...(config.jwtPrivateKey ? { privateKeyPem: config.jwtPrivateKey } : {}),
    ...(config.jwtPublicKey ? { publicKeyPem: config.jwtPublicKey } : {}),
  };
  if (config.jwtSecondaryType) {
    opts.secondary = {
      type: config.jwtSecondaryType as JwtType,
      ...(config.jwtSecondarySecret ? { secret: config.jwtSecondarySecret } : {}),
      ...(config.jwtSecondaryPublicKey ? { publicKeyPem: config.jwtSecondaryPublicKey } : {}),
    };
  }
  return opts;
}

/**
 * Signer + authenticator over a session store. The admin cookie and the admin-secret lockout read the
 * deployment's shared admin store (Redis under `--redis-url`, else this process's; behaviour.md §5.1).
 */
export function createPlatformAuth(config: Config, sessions: SessionStore, extra: { users?: { isActive(userId: string): Promise<boolean> } } = {}): { jwt: JwtSigner; authenticator: Authenticator } {
  const jwt = createJwtSigner(jwtOptionsOf(config));
  const authenticator = createAuthenticator({
    jwt,
    sessions,
    issuer: config.url,
    adminSecret: config.adminSecret,
    disableAdminHeaderAuth: config.disableAdminHeaderAuth,
    clientId: config.clientId,
    adminSessions: adminSessionCheck(config),
    adminSecretFailures: adminAccessStoreFor(config).failures,
    ...(extra.users ? { users: extra.users } : {}),
  });
  return { jwt, authenticator };
}

/** The `service-admin` cookie check against the deployment's admin store (behaviour.md §5.1). */
export function adminSessionCheck(config: Pick<Config, 'redisUrl' | 'clientId'>): { isValid(handle: string): Promise<boolean> } {
  const store = adminAccessStoreFor(config);
  return { isValid: async (handle) => (await store.getSession(sha256Hex(handle), Math.floor(Date.now() / 1000))) !== null };
}
