/**
 * @module test/e2e/grpc-metrics
 * Issue 15 ("observability past the HTTP port"): every gRPC listener records
 * `gatehouse_grpc_server_handled_total` and `gatehouse_grpc_server_duration_seconds` by method and
 * code, on the metrics listener of its own process: the public port (the gateway in split mode, the
 * one process in all-in-one) and each service's own port behind it.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { createCallContext, createGrpcClient, serviceDescriptor, type ServiceName } from '@gatehouse/rpc';

jest.setTimeout(60_000);

/** One RPC per public API, called without credentials: each is answered (OK or a refusal) and counted. */
const CALLS: ReadonlyArray<{ service: ServiceName; rpc: string; code: string }> = [
  { service: 'authn', rpc: 'Meta', code: 'OK' },
  { service: 'mfa', rpc: 'WebauthnCredentials', code: 'UNAUTHENTICATED' },
  { service: 'admin', rpc: 'AdminMeta', code: 'UNAUTHENTICATED' },
  { service: 'orgs', rpc: 'CreateOrganization', code: 'UNAUTHENTICATED' },
  { service: 'authz', rpc: 'CheckPermissions', code: 'UNAUTHENTICATED' },
];

const series = (service: ServiceName, rpc: string, code: string): string =>
  `gatehouse_grpc_server_handled_total{method="/gatehouse.${service}.v1.${service[0]!.toUpperCase()}${service.slice(1)}Service/${rpc}",code="${code}"}`;

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.text();
}

describe.each(['all', 'split'] as const)('gRPC server metrics (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment(mode, { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('the public port and every service behind it count the calls they answered', async () => {
    for (const { service, rpc } of CALLS) {
      const client = createGrpcClient(serviceDescriptor(service), { address: d.grpcAddress });
      try {
        await client.call(rpc, {}, createCallContext()).catch(() => undefined);
      } finally {
        client.close();
      }
    }
    const publicPort = await scrape(d.metricsUrl);
    for (const { service, rpc, code } of CALLS) expect(publicPort).toContain(`${series(service, rpc, code)} 1`);
    expect(publicPort).toContain('gatehouse_grpc_server_duration_seconds_bucket{');
    if (mode === 'all') return;
    // each service's own metrics listener, at the --metrics-port it was started with
    for (const { service, rpc, code } of CALLS) {
      const proc = d.processes.find((p) => p.command === service)!;
      const port = proc.child.spawnargs.find((a) => a.startsWith('--metrics-port='))!.split('=')[1];
      expect(await scrape(`http://127.0.0.1:${port}/metrics`)).toContain(`${series(service, rpc, code)} 1`);
    }
  });
});
