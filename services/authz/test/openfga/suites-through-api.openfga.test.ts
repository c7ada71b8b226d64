/**
 * @module authz/test/openfga/suites-through-api.openfga.test
 * OpenFGA's own conformance data (its ABAC and consolidated schema 1.1 tests, see openfga-suites.ts) driven
 * through OpenFGA's JavaScript SDK (`@openfga/sdk`) against two servers side by side (issue 36 "What must
 * be shown"): Gatehouse's OpenFGA HTTP API (the listener of `--openfga-http-port`, over the embedded
 * engine, here in process on the memory store) and the real OpenFGA server (scripts/install-openfga.sh,
 * memory datastore). Each test gets a new store on each server (CreateStore), and the same client, the
 * OpenFGA backend's adapter (`createOpenFgaEngine`: an Engine over the SDK), asks both every check, list
 * objects and list users assertion of the data. Both must answer as the data says, so they answer alike.
 *
 * Not replayed, as in openfga-suites.test.ts: the `inline_expression_*` ABAC tests (an experimental OpenFGA
 * flag). The tuples-as-contextual-tuples variant runs in openfga-suites.test.ts on the engine itself.
 * A quick run: jest's `-t <name>` picks tests by name.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenFgaClient } from '@openfga/sdk';
import { Registry } from 'prom-client';
import { monotonicFactory } from 'ulid';
import type { OpenFgaServer } from '@gatehouse/testing';
import { createLogger } from '@gatehouse/observability';
import { createEngine, type Engine } from '../../src/domain/index.ts';
import { createMemoryCatalog, createMemoryStore } from '../../src/storage/memory.ts';
import { startOpenFgaHttp, type OpenFgaHttpServer } from '../../src/openfga-api/http.ts';
import { createOpenFgaOperations } from '../../src/openfga-api/operations.ts';
import { createStoreDirectory } from '../../src/openfga-api/stores.ts';
import { createOpenFgaEngine } from '../../src/openfga/engine.ts';
import { loadFgaTests, runFgaTest } from '../openfga-suites.ts';
import { startTestOpenFga } from './harness.ts';

const experimental = (name: string): boolean => name.startsWith('inline_expression_');

let openfga: OpenFgaServer;
let gatehouse: OpenFgaHttpServer;
beforeAll(async () => {
  openfga = await startTestOpenFga();
  const store = createMemoryStore();
  const ops = createOpenFgaOperations(createStoreDirectory({ engine: createEngine({ store }), store, catalog: createMemoryCatalog(), newId: monotonicFactory() }), {
    maxTuplesPerWrite: 100, maxChecksPerBatchCheck: 50, listObjectsMaxResults: 1000, listUsersMaxResults: 1000, listDeadlineMs: 0,
  });
  gatehouse = await startOpenFgaHttp({ host: '127.0.0.1', port: 0, ops, authn: { method: 'none' }, logger: createLogger('silent'), registry: new Registry() });
}, 60_000);
afterAll(async () => {
  await gatehouse?.close();
  await openfga?.stop();
});

/** A new store on the server at `url` (CreateStore through the SDK) and the SDK-backed engine on it. */
async function storeOn(url: string): Promise<Engine> {
  const { id } = await new OpenFgaClient({ apiUrl: url }).createStore({ name: `case-${Date.now()}` });
  const engine = createOpenFgaEngine({ url, storeId: id });
  await engine.warm();
  return engine;
}

for (const file of ['abac_tests.yaml', 'consolidated_1_1_tests.yaml']) {
  describe(`OpenFGA's ${file} through the SDK: Gatehouse's OpenFGA API and OpenFGA's server`, () => {
    const tests = loadFgaTests(file).filter((x) => !experimental(x.name));
    for (const t of tests) {
      it(t.name, async () => {
        const [gh, of] = await Promise.all([
          runFgaTest(t, false, () => storeOn(`http://127.0.0.1:${gatehouse.port}`)),
          runFgaTest(t, false, () => storeOn(openfga.url)),
        ]);
        expect({ gatehouse: gh, openfga: of }).toEqual({ gatehouse: [], openfga: [] });
      }, 120_000);
    }
  });
}
