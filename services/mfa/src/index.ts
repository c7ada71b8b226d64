/**
 * @module @gatehouse/mfa
 * The mfa service's module (docs/architecture.md): MFA sessions, one-time codes and (later) factors;
 * it answers authn's challenges and verdicts and calls no other service (issue 14 §5).
 */
import type { ServiceModule } from '@gatehouse/service';
import { mfaTypeDefs } from './graphql/schema.ts';

export const mfaModule: ServiceModule = {
  name: 'mfa',
  summary: 'multi-factor authentication: MFA sessions, one-time codes (email, SMS), TOTP with recovery codes, passkeys, and the gate authn asks for',
  publicApi: 'mfa',
  internalApi: 'mfa.internal',
  typeDefs: mfaTypeDefs,
  calls: [],
  async build(config, shared) {
    const { buildMfa } = await import('./main.ts');
    return buildMfa(config, shared);
  },
  async reseal(config, logger) {
    const { resealMfa } = await import('./main.ts');
    return resealMfa(config, logger);
  },
};
