/**
 * @module authz/test/openfga/harness
 * A real OpenFGA server for the backend tests (issue 21 §4): one server per test file, a fresh store
 * (and a fresh `createOpenFgaEngine` on it) per case, so cases never see each other's tuples.
 */
import { OpenFgaClient } from '@openfga/sdk';
import { startOpenFga, type OpenFgaServer } from '@gatehouse/testing';
import type { Engine } from '../../src/domain/index.ts';
import { createOpenFgaEngine } from '../../src/openfga/engine.ts';

/** Starts OpenFGA (memory datastore, list deadlines long enough for a loaded CI machine). */
export function startTestOpenFga(): Promise<OpenFgaServer> {
  return startOpenFga();
}

/** A new, empty store on `server` and the backend engine bound to it. */
export async function freshOpenFgaEngine(server: OpenFgaServer): Promise<{ engine: Engine; storeId: string }> {
  const admin = new OpenFgaClient({ apiUrl: server.url });
  const { id } = await admin.createStore({ name: `case-${Date.now()}` });
  const engine = createOpenFgaEngine({ url: server.url, storeId: id });
  await engine.warm();
  return { engine, storeId: id };
}
