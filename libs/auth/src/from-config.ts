/**
 * @module @gatehouse/auth/from-config
 * Builds the token signer/verifier and the authenticator every service needs from the startup
 * flags, so each `main` wires credential resolution the same way (ARCHITECTURE §2).
 */
import type { Config } from '@gatehouse/config';
import { createJwtSigner, type JwtSigner, type JwtSignerOptions, type JwtType } from '@gatehouse/crypto';
import { createAuthenticator, type Authenticator } from './authenticator.ts';
import type { SessionStore } from './session-store.ts';

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

/** Signer + authenticator over a session store. */
export function createPlatformAuth(config: Config, sessions: SessionStore, extra: { users?: { isActive(userId: string): Promise<boolean> } } = {}): { jwt: JwtSigner; authenticator: Authenticator } {
  const jwt = createJwtSigner(jwtOptionsOf(config));
  const authenticator = createAuthenticator({
    jwt,
    sessions,
    issuer: config.url,
    adminSecret: config.adminSecret,
    disableAdminHeaderAuth: config.disableAdminHeaderAuth,
    clientId: config.clientId,
    ...(extra.users ? { users: extra.users } : {}),
  });
  return { jwt, authenticator };
}
