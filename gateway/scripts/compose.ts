/**
 * @module gateway/scripts/compose
 * Build-time composition of the services' subgraph SDLs (a build step, like code generation: the
 * gateway process itself reads only the committed supergraph file).
 */
import { composeServices } from '@apollo/composition';
import type { DocumentNode } from 'graphql';
import { SERVICES } from '../../services/registry.ts';

/** The subgraphs of this release, by name: every service of the registry that has one. */
export const SUBGRAPH_SDLS: Record<string, DocumentNode> = Object.fromEntries(
  SERVICES.flatMap((m) => (m.typeDefs ? [[m.name, m.typeDefs] as const] : [])),
);

/** @throws Error listing composition errors */
export function composeSupergraph(): string {
  const result = composeServices(Object.entries(SUBGRAPH_SDLS).map(([name, typeDefs]) => ({ name, typeDefs, url: `http://${name}.invalid/graphql` })));
  if (result.errors) throw new Error(`supergraph composition failed: ${result.errors.map((e) => e.message).join('; ')}`);
  return result.supergraphSdl;
}
