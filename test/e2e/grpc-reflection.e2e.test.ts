/**
 * @module test/e2e/grpc-reflection
 * Issue 15 (gRPC server reflection): the public gRPC port answers the gRPC Server Reflection
 * Protocol, so grpcurl, a real third-party client (scripts/install-grpcurl.sh), lists the public
 * services, describes their methods and calls one without a copy of `proto/`. The internal
 * (service-to-service) APIs are never listed.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';

jest.setTimeout(60_000);

const GRPCURL = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.tools/bin/grpcurl');

async function grpcurl(...args: string[]): Promise<string> {
  if (!existsSync(GRPCURL)) throw new Error(`grpcurl not found at ${GRPCURL}: run scripts/install-grpcurl.sh`);
  const { stdout } = await promisify(execFile)(GRPCURL, ['-plaintext', ...args], { timeout: 20_000 });
  return stdout;
}

describe.each(['all', 'split'] as const)('gRPC server reflection on the public port (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => { d = await startDeployment(mode, { readyTimeoutMs: 60_000 }); }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('lists exactly the public services', async () => {
    const services = (await grpcurl(d.grpcAddress, 'list')).trim().split('\n').sort();
    expect(services).toEqual([
      'gatehouse.admin.v1.AdminService', 'gatehouse.authn.v1.AuthnService', 'gatehouse.authz.v1.AuthzService',
      'gatehouse.mfa.v1.MfaService', 'gatehouse.orgs.v1.OrgsService',
    ]);
  });

  it('describes a method and its messages, and a call built from reflection alone is answered', async () => {
    expect(await grpcurl(d.grpcAddress, 'describe', 'gatehouse.authn.v1.AuthnService.Login'))
      .toContain('rpc Login ( .gatehouse.authn.v1.LoginRequest ) returns ( .gatehouse.common.v1.AuthResponse )');
    expect(await grpcurl(d.grpcAddress, 'describe', 'gatehouse.authn.v1.LoginRequest')).toContain('password');
    const meta = JSON.parse(await grpcurl('-d', '{}', d.grpcAddress, 'gatehouse.authn.v1.AuthnService/Meta')) as Record<string, unknown>;
    expect(meta.clientId).toBe(d.clientId); // grpcurl prints protobuf JSON: lowerCamelCase names
  });

  it('never describes an internal API', async () => {
    await expect(grpcurl(d.grpcAddress, 'describe', 'gatehouse.mfa.v1.MfaInternal')).rejects.toThrow(/not found|Symbol not found/i);
  });
});
