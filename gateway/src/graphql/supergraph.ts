/**
 * @module gateway/graphql/supergraph
 * The committed supergraph (composed at build time by `npm run compose`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SUPERGRAPH_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../supergraph.graphql');

/** The subgraphs the supergraph names: the registry's services with a subgraph (generated). */
export { SUBGRAPH_NAMES } from '@gatehouse/contracts/service-names';

/** Reads the committed supergraph SDL. */
export function readSupergraph(): string {
  return readFileSync(SUPERGRAPH_PATH, 'utf8');
}
