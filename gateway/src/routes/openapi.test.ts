import { describe, it, expect } from '@jest/globals';
import { createInProcessClient, serviceDescriptor, unimplementedService, type ServiceClient } from '@gatehouse/rpc';
import { ROUTES, buildOpenApi, notServedOperations } from './table.ts';

type Op = Record<string, any>;

/** The operation of `/openapi.json` with this operation id. */
function operationOf(doc: Record<string, any>, id: string): Op {
  for (const item of Object.values(doc.paths as Record<string, Record<string, Op>>)) {
    for (const op of Object.values(item)) if (op.operationId === id) return op;
  }
  throw new Error(`no operation ${id}`);
}

describe('x-gatehouse-not-served (issue 15 item 8): from the handler maps that answer', () => {
  // orgs with every RPC answering `unimplemented` except Organization, which runs real code;
  // every other service absent from the deployment
  const orgs = unimplementedService(serviceDescriptor('orgs'), async () => undefined);
  const served = createInProcessClient(orgs.desc, { ...orgs.handlers, Organization: async () => ({ id: 'o1' }) });

  it('marks the routes whose handler is notImplemented or whose service is absent, and only those', async () => {
    const { notServed, complete } = await notServedOperations(ROUTES, { orgs: served });
    expect(complete).toBe(true);
    expect(notServed.has('orgs.CreateOrganization')).toBe(true);
    expect(notServed.has('authn.Signup')).toBe(true);
    expect(notServed.has('orgs.Organization')).toBe(false);

    const doc = buildOpenApi(ROUTES, { version: 'test', serverUrl: 'http://127.0.0.1', notServed });
    const create = operationOf(doc, 'orgs.CreateOrganization');
    expect(create['x-gatehouse-not-served']).toBe(true);
    expect(create.description).toMatch(/^Not served by this build/);
    expect(create.responses['501']).toEqual({ $ref: '#/components/responses/Error501' });
    const get = operationOf(doc, 'orgs.Organization');
    expect(get['x-gatehouse-not-served']).toBeUndefined();
    expect(get.responses['501']).toBeUndefined();
  });

  it('leaves a service\'s routes unmarked, and says so, when the service could not be asked', async () => {
    const unreachable: Pick<ServiceClient, 'served'> = { served: async () => { throw new Error('connection refused'); } };
    const { notServed, complete } = await notServedOperations(ROUTES, { orgs: unreachable });
    expect(complete).toBe(false);
    expect(notServed.has('orgs.CreateOrganization')).toBe(false);
  });
});
