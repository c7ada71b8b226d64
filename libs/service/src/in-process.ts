/**
 * @module @gatehouse/service/in-process
 * All-in-one (ARCHITECTURE §1): every service of the registry built in this process from one Config,
 * in registry order, with no code path of its own: the same `build` as split mode, peers reached
 * through the in-process network instead of gRPC, and the first credential resolution built (authn's)
 * shared with the services after it; under `--env=development`, one development outbox shared by
 * notifications and admin (issue 33 §4).
 */
import type { Authenticator, InvalidationChannel } from '@gatehouse/auth';
import type { Bus } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import { createDevOutbox } from '@gatehouse/delivery';
import type { Logger, Registry } from '@gatehouse/observability';
import { createLocalNetwork, serviceDescriptor, typedClient, type InternalServiceName } from '@gatehouse/rpc';
import type { PeerClient, ServiceModule, ServiceRuntime } from './module.ts';

/** One built service. */
export interface BuiltService {
  module: ServiceModule;
  runtime: ServiceRuntime;
}

/**
 * Builds `modules` in order. A service's `peer()` clients find their target when they call, so a
 * service may be built before the peer it calls.
 * @returns the built services, in build order (close them in reverse)
 */
export async function buildInProcess(modules: readonly ServiceModule[], config: Config, shared: { logger: Logger; registry: Registry; bus: Bus; invalidation?: InvalidationChannel }): Promise<BuiltService[]> {
  const local = createLocalNetwork();
  let authenticator: Authenticator | null = null;
  const built: BuiltService[] = [];
  // issue 33 §4: one development outbox for the process, written by notifications and read by admin
  const devOutbox = config.devOutbox.email || config.devOutbox.sms ? createDevOutbox() : undefined;
  for (const module of modules) {
    const runtime = await module.build(config, {
      ...shared,
      authenticator,
      soleWriter: true,
      ...(devOutbox ? { devOutbox } : {}),
      peer<D extends InternalServiceName>(api: D): PeerClient<D> {
        const desc = serviceDescriptor(api);
        return typedClient(desc, local.transport(desc)) as unknown as PeerClient<D>;
      },
    });
    if (runtime.internal) local.serve(runtime.internal);
    authenticator ??= runtime.authenticator ?? null;
    built.push({ module, runtime });
  }
  return built;
}
