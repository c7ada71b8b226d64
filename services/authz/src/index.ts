/**
 * @module @gatehouse/authz
 * The authz service's module (docs/architecture.md): the relationship engine, its models and tuples;
 * several replicas behind the gateway, each also a direct gRPC API for internal platforms.
 */
import type { ServiceModule } from '@gatehouse/service';
import { authzTypeDefs } from './graphql/schema.ts';

export const authzModule: ServiceModule = {
  name: 'authz',
  summary: 'the relationship-based authorization engine (OpenFGA models and tuples; embedded, or an OpenFGA server)',
  publicApi: 'authz',
  internalApi: 'authz.internal',
  typeDefs: authzTypeDefs,
  calls: [],
  replicated: true,
  requires: [{ key: 'redisUrl', why: 'callers\' sessions are shared through Redis in split mode' }],
  async build(config, shared) {
    const { buildAuthz } = await import('./main.ts');
    return buildAuthz(config, shared);
  },
};
