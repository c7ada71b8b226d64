/**
 * @module @gatehouse/authn
 * The authn service's module (docs/architecture.md): users, passwords, sessions and tokens, the one
 * place sessions are issued (issue 14 §5); it asks mfa for challenges and verdicts.
 */
import type { ServiceModule } from '@gatehouse/service';
import { authnTypeDefs } from './graphql/schema.ts';

export const authnModule: ServiceModule = {
  name: 'authn',
  summary: 'users, sign-up, login, sessions, tokens, JWKS and discovery, email and phone verification, social login, the OAuth 2.0 / OpenID Provider endpoints, clients and trusted issuers',
  publicApi: 'authn',
  internalApi: 'authn.internal',
  typeDefs: authnTypeDefs,
  calls: ['mfa.internal'],
  // login, sign-up and sessions: the gateway is not Ready without it
  essential: true,
  async build(config, shared) {
    const { buildAuthn } = await import('./main.ts');
    return buildAuthn(config, shared);
  },
  async reseal(config, logger) {
    const { resealAuthn } = await import('./main.ts');
    return resealAuthn(config, logger);
  },
};
