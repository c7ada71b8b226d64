/**
 * The registry is the one list of services (issue 14 §4): every consumer derives its list from it, so
 * adding a service is its folder under services/ and one line in registry.ts. This file holds each
 * consumer to that: the CLI commands, the gateway's routes and required flags, the supergraph's
 * subgraphs, the public gRPC services, the chart's components and the peers split mode wires up.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, loadConfig, registry as flags, type CommandName } from '@gatehouse/config';
import { serviceDescriptor, type DescriptorName } from '@gatehouse/rpc';
import { descriptorsOf } from '@gatehouse/service';
import { SUBGRAPH_SDLS } from '../gateway/scripts/compose.ts';
import { chartServices } from '../scripts/gen-chart-flags.ts';
import { SERVICES } from './registry.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const accepts = (command: string, key: string): boolean =>
  ((flags as Record<string, { commands: readonly string[] } | undefined>)[key]?.commands ?? []).includes(command);

describe('services/registry.ts', () => {
  it('lists every service folder once, each exporting its module from src/index.ts under its own name', async () => {
    const folders = readdirSync(HERE, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    expect(SERVICES.map((m) => m.name).sort()).toEqual(folders);
    for (const name of folders) {
      const pkg = JSON.parse(readFileSync(path.join(HERE, name, 'package.json'), 'utf8')) as { name: string; exports: Record<string, string> };
      expect({ name, entry: pkg.exports['.'], exists: existsSync(path.join(HERE, name, pkg.exports['.']!)) }).toEqual({ name, entry: './src/index.ts', exists: true });
      const exported = Object.values(await import(`@gatehouse/${name}`) as Record<string, unknown>).filter((v) => SERVICES.includes(v as never));
      expect(exported.map((m) => (m as { name: string }).name)).toEqual([name]);
    }
  });

  it('is the CLI\'s list of service commands (`gatehouse <name>` runs its module)', () => {
    expect(SERVICES.map((m) => m.name).sort()).toEqual(COMMANDS.filter((c) => c !== 'all' && c !== 'gateway').sort());
  });

  it('serves every proto service exactly once, and each module\'s descriptors exist', () => {
    const served = SERVICES.flatMap(descriptorsOf);
    // what proto/ declares: `service <Name>Service` / `service <Name>Internal` in gatehouse/<name>/v1/<name>.proto
    const protoDir = path.join(HERE, '../proto/gatehouse');
    const all = readdirSync(protoDir).filter((dir) => existsSync(path.join(protoDir, dir, 'v1', `${dir}.proto`)))
      .flatMap((dir) => [...readFileSync(path.join(protoDir, dir, 'v1', `${dir}.proto`), 'utf8').matchAll(/^service \w+?(Service|Internal) \{/gm)]
        .map((m) => (m[1] === 'Internal' ? `${dir}.internal` : dir) as DescriptorName));
    expect(all.length).toBeGreaterThan(0);
    expect([...served].sort()).toEqual([...all].sort());
    for (const d of served) expect(serviceDescriptor(d).methods.size).toBeGreaterThan(0);
  });

  it('composes the supergraph from the modules that have a subgraph, and routes the gateway to each public API', () => {
    expect(Object.keys(SUBGRAPH_SDLS).sort()).toEqual(SERVICES.filter((m) => m.typeDefs).map((m) => m.name).sort());
    const argv = ['--admin-secret=0123456789abcdef0123456789abcdef', '--client-id=c', '--client-secret=s', '--url=https://auth.example.com'];
    const missing = loadConfig('gateway', argv).errors.join('\n');
    for (const m of SERVICES) {
      // the gateway takes, and requires, the address and subgraph URL of every service with a public API
      expect({ name: m.name, address: accepts('gateway', `${m.name}Address`), required: missing.includes(`--${m.name}-address`) })
        .toEqual({ name: m.name, address: Boolean(m.publicApi), required: Boolean(m.publicApi) });
      expect({ name: m.name, graphqlUrl: accepts('gateway', `${m.name}GraphqlUrl`) }).toEqual({ name: m.name, graphqlUrl: Boolean(m.typeDefs) });
    }
  });

  it('is the chart\'s list of components, routes and peer calls (charts/gatehouse/files/flags.json is generated from it)', () => {
    const chart = chartServices();
    expect({ components: chart.components, routed: chart.routed, calls: chart.calls }).toEqual({
      components: ['gateway', ...SERVICES.map((m) => m.name)],
      routed: SERVICES.filter((m) => m.publicApi).map((m) => m.name),
      calls: { admin: ['authn'], authn: ['mfa'], notifications: ['admin'], orgs: ['authn', 'authz'] },
    });
    // the components with a gRPC listener: `gatehouse notifications` serves no API, so it has none
    expect(chart.grpc).toEqual(['gateway', ...SERVICES.filter((m) => m.publicApi || m.internalApi).map((m) => m.name)]);
    expect(chart.grpc).not.toContain('notifications');
    // every module's own requires reaches the chart
    for (const m of SERVICES) for (const r of m.requires ?? []) expect(chart.requires[m.name]?.[r.key]).toBe(r.why);
  });

  it('lets each service be told where the peers it calls listen, and calls go one way (no cycle)', () => {
    for (const m of SERVICES) {
      for (const api of m.calls) {
        const peer = api.split('.')[0]!;
        expect({ service: m.name, flag: `--${peer}-address`, accepted: accepts(m.name as CommandName, `${peer}Address`) })
          .toEqual({ service: m.name, flag: `--${peer}-address`, accepted: true });
        const callee = SERVICES.find((s) => s.name === peer)!;
        expect({ service: m.name, calls: peer, servedInternally: callee.internalApi }).toEqual({ service: m.name, calls: peer, servedInternally: api });
        expect({ service: peer, callsBack: callee.calls.some((c) => c.startsWith(`${m.name}.`)) }).toEqual({ service: peer, callsBack: false });
      }
    }
  });
});
