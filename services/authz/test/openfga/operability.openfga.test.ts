/**
 * @module authz/test/openfga/operability.openfga.test
 * The OpenFGA backend is operable like the embedded one (issue 21): its readiness probe (authz's
 * `/readyz` entry `openfga`) answers while the real OpenFGA server does and fails with the cause once it
 * is gone, and every call it makes there reaches the process's observer (authz's metrics) with its
 * OpenFGA method, outcome and duration.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenFgaServer } from '@gatehouse/testing';
import { AppError } from '@gatehouse/errors';
import { observeOpenFga } from '../../src/openfga/client.ts';
import { createOpenFgaEngine } from '../../src/openfga/engine.ts';
import { startTestOpenFga } from './harness.ts';

const MODEL = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n';

let server: OpenFgaServer;
beforeAll(async () => { server = await startTestOpenFga(); }, 60_000);
afterAll(async () => { await server?.stop(); });
afterEach(() => observeOpenFga(null));

describe('the OpenFGA backend is operable', () => {
  it('reports each OpenFGA call with its method, outcome and duration', async () => {
    const seen: Array<{ method: string; outcome: string; seconds: number }> = [];
    observeOpenFga((method, outcome, seconds) => seen.push({ method, outcome, seconds }));
    const engine = createOpenFgaEngine({ url: server.url });
    await engine.warm();
    await engine.writeModel(MODEL);
    await engine.writeTuples([{ user: 'user:ann', relation: 'viewer', object: 'doc:1' }]);
    expect((await engine.check('user:ann', [{ relation: 'viewer', object: 'doc:1' }]))[0]!.allowed).toBe(true);
    const methods = new Set(seen.filter((s) => s.outcome === 'ok').map((s) => s.method));
    for (const m of ['ListStores', 'WriteAuthorizationModel', 'Write', 'BatchCheck']) expect(methods).toContain(m);
    expect(seen.every((s) => Number.isFinite(s.seconds) && s.seconds >= 0)).toBe(true);
  });

  it('is ready while the server answers for the store; once it is gone, not ready with the cause, and calls are unavailable', async () => {
    const own = await startTestOpenFga();
    const engine = createOpenFgaEngine({ url: own.url });
    await engine.warm();
    await expect(engine.ready()).resolves.toBeUndefined();
    const seen: string[] = [];
    observeOpenFga((method, outcome) => seen.push(`${method} ${outcome}`));
    await own.stop();
    await expect(engine.ready()).rejects.toThrow(/ECONNREFUSED|socket hang up|connect/);
    const err = await engine.check('user:ann', [{ relation: 'viewer', object: 'doc:1' }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('unavailable');
    expect(seen).toContain('GetStore unavailable');
  }, 60_000);

  it('is not ready when the configured store does not exist', async () => {
    const engine = createOpenFgaEngine({ url: server.url, storeId: '01JZZZZZZZZZZZZZZZZZZZZZZZ' });
    await expect(engine.ready()).rejects.toThrow(/./);
  });
});
