/**
 * @module test/support/authz-backends
 * The authz e2e suites run against both engine backends (issue 21 §4): the embedded engine (in both
 * deployment modes) and `--fga-store=openfga`, where a real OpenFGA server (memory datastore, started
 * here on 127.0.0.1) answers every authorization call and the /v1 answers must stay identical.
 */
import { startOpenFga, type OpenFgaServer } from '@gatehouse/testing';

export type AuthzBackend = 'embedded' | 'openfga';

/** Deployment mode × backend: both modes on the embedded engine, all-in-one on OpenFGA. */
export const AUTHZ_CONFIGS = [['all', 'embedded'], ['split', 'embedded'], ['all', 'openfga']] as const;

/**
 * The extra deployment flags of `backend`, and what to stop afterwards: for `openfga`, a fresh
 * OpenFGA server (an empty store per suite) and the flags that point authz at it.
 */
export async function backendFlags(backend: AuthzBackend): Promise<{ flags: string[]; stop(): Promise<void> }> {
  if (backend === 'embedded') return { flags: [], stop: async () => undefined };
  const server: OpenFgaServer = await startOpenFga();
  return { flags: ['--fga-store=openfga', `--fga-store-url=${server.url}`], stop: () => server.stop() };
}
