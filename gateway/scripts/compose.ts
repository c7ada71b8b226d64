/**
 * @module gateway/scripts/compose
 * Build-time composition of the services' subgraph SDLs (a build step, like code generation: the
 * gateway process itself reads only the committed supergraph file).
 */
import { composeServices } from '@apollo/composition';
import { parse, print, type DefinitionNode, type DocumentNode } from 'graphql';
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

type Named = { name?: { value: string }; kind: string };
const byName = <T extends Named>(xs: readonly T[] | undefined): T[] | undefined => xs && [...xs].sort((a, b) => `${a.name?.value ?? ''}`.localeCompare(`${b.name?.value ?? ''}`) || a.kind.localeCompare(b.kind));

/**
 * A supergraph SDL in a canonical order: definitions by kind and name, fields, arguments, enum values
 * and input fields by name; applied directives (`@join__field(graph: MFA)`, `@shareable`, ...) stay on
 * their element. Two compositions of the same subgraphs print the same text whatever order their
 * subgraph SDLs declared things in, so a generated subgraph can be compared with a hand-written one.
 */
export function normaliseSupergraph(sdl: string): string {
  const doc = parse(sdl, { noLocation: true });
  const sortMembers = (def: DefinitionNode): DefinitionNode => {
    const d = def as DefinitionNode & { fields?: readonly (Named & { arguments?: readonly Named[] })[]; values?: readonly Named[]; arguments?: readonly Named[] };
    return {
      ...d,
      ...(d.fields ? { fields: byName(d.fields)!.map((f) => ({ ...f, ...(f.arguments ? { arguments: byName(f.arguments) } : {}) })) } : {}),
      ...(d.values ? { values: byName(d.values) } : {}),
      ...(d.arguments ? { arguments: byName(d.arguments) } : {}),
    } as DefinitionNode;
  };
  const key = (d: DefinitionNode): string => `${d.kind} ${'name' in d && d.name ? d.name.value : ''}`;
  const definitions = doc.definitions.map(sortMembers).sort((a, b) => key(a).localeCompare(key(b)));
  return `${print({ ...doc, definitions })}\n`;
}
