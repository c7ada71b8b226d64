/**
 * Composes the subgraph SDLs into gateway/supergraph.graphql (graphql.md §5.3: a supergraph composed
 * at build time, so the gateway's start does not depend on every subgraph being up). Run with
 * `npm run compose`; gateway/scripts/compose.test.ts fails when the committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { composeSupergraph } from './compose.ts';
import { SUPERGRAPH_PATH } from '../src/graphql/supergraph.ts';

writeFileSync(SUPERGRAPH_PATH, composeSupergraph());
process.stdout.write(`wrote ${SUPERGRAPH_PATH}\n`);
