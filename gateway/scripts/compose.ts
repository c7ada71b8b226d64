/**
 * @module gateway/scripts/compose
 * Build-time composition of the services' subgraph SDLs (a build step, like code generation: the
 * gateway process itself reads only the committed supergraph file).
 */
import { composeServices } from '@apollo/composition';
import type { DocumentNode } from 'graphql';
import { adminTypeDefs } from '../../services/admin/src/graphql/schema.ts';
import { authnTypeDefs } from '../../services/authn/src/graphql/schema.ts';
import { authzTypeDefs } from '../../services/authz/src/graphql/schema.ts';
import { mfaTypeDefs } from '../../services/mfa/src/graphql/schema.ts';
import { orgsTypeDefs } from '../../services/orgs/src/graphql/schema.ts';

/** The subgraphs of this release, by name. */
export const SUBGRAPH_SDLS: Record<string, DocumentNode> = {
  authn: authnTypeDefs, mfa: mfaTypeDefs, admin: adminTypeDefs, orgs: orgsTypeDefs, authz: authzTypeDefs,
};

/** @throws Error listing composition errors */
export function composeSupergraph(): string {
  const result = composeServices(Object.entries(SUBGRAPH_SDLS).map(([name, typeDefs]) => ({ name, typeDefs, url: `http://${name}.invalid/graphql` })));
  if (result.errors) throw new Error(`supergraph composition failed: ${result.errors.map((e) => e.message).join('; ')}`);
  return result.supergraphSdl;
}
