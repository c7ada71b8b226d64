/**
 * @module @gatehouse/service/module
 * What a service is to the rest of the repository (issue 14 §4): one `ServiceModule`, exported by its
 * `src/index.ts` and listed once in `services/registry.ts`. All-in-one, split mode (`runService`), the
 * gateway, the supergraph composition, the CLI and the chart iterate that list; nothing else names
 * the services.
 */
import type { DocumentNode, GraphQLSchema } from 'graphql';
import type { Authenticator, InvalidationChannel } from '@gatehouse/auth';
import type { Bus } from '@gatehouse/bus';
import type { Config } from '@gatehouse/config';
import type { DevOutbox } from '@gatehouse/delivery';
import type { DependencyCheck, Logger, Registry } from '@gatehouse/observability';
import type { ProtoServices } from '@gatehouse/contracts';
import type { ServiceModuleName } from '@gatehouse/contracts/service-names';
import type { ClientOf, DescriptorName, FullNameOf, InternalServiceName, ServiceImplementation, ServiceName } from '@gatehouse/rpc';

/** A service's name: its CLI command, chart component, subgraph and metric label (generated from the registry). */
export type { ServiceModuleName };

/** A typed client of a peer's internal API (proto `<Service>Internal`). */
export type PeerClient<D extends InternalServiceName> = FullNameOf<D> extends keyof ProtoServices ? ClientOf<ProtoServices[FullNameOf<D>]> : never;

/** What every service is built with, in either mode. */
export interface ServiceShared {
  /** the process's logger; the service takes a child with `{ service: <name> }` */
  logger: Logger;
  /** the process's metrics registry (one per process: all-in-one registers each name once) */
  registry: Registry;
  /** the event bus its outbox relay publishes to, and consumers read; null: events wait in the outbox */
  bus: Bus | null;
  /**
   * The deployment's credential resolution, for services that check callers but own no sessions:
   * authn's in all-in-one; over the Redis session store in split mode; null when neither exists.
   */
  authenticator: Authenticator | null;
  /**
   * A client of a peer's internal API: in process in all-in-one (resolved when called, so building
   * order does not matter), gRPC to `--<peer>-address` in split mode; null when not configured.
   * Calls go one way (issue 14 §5): a factor service never asks for authn.
   */
  peer<D extends InternalServiceName>(name: D): PeerClient<D> | null;
  /** all-in-one: no other process writes the database (credential caches, libs/auth README) */
  soleWriter: boolean;
  /**
   * The process's notification channel (libs/auth README "Credential caches"): writers of sessions, users
   * and authz tuples publish on it before they answer, and the in-memory answers of every process watch it.
   * Absent (unit fixtures): no cross-process caches.
   */
  invalidation?: InvalidationChannel;
  /**
   * The development outbox (issue 33 §4) all-in-one shares between the notifications worker, which keeps
   * the messages, and admin, which lists them: present only under `--env=development` with a channel
   * lacking its provider (Config's `devOutbox`). Absent in split mode, where the worker keeps its own
   * and admin, in another process, cannot read it.
   */
  devOutbox?: DevOutbox;
}

/** A built service, ready to be served. */
export interface ServiceRuntime {
  /** its public API (routed by the gateway, served on the public gRPC port), if any */
  public?: ServiceImplementation;
  /** its service-to-service API (`<service>.internal`), served only to callers holding the internal token */
  internal?: ServiceImplementation;
  /**
   * its federation subgraph, when it has one, built on first call: all-in-one builds it with the GraphQL
   * gateway's first request, not at start-up (issue 22 §3)
   */
  schema?: () => GraphQLSchema;
  /** the credential resolution it builds for the deployment (authn), shared with later services in all-in-one */
  authenticator?: Authenticator;
  /** its own dependencies (its database, ...) for `/readyz`; the process adds Redis, NATS and its peers */
  readiness?: readonly DependencyCheck[];
  /** fields of its `<name> started` log line (e.g. authz's `store`) */
  logFields?: Record<string, unknown>;
  close(): Promise<void>;
}

/** One service, as the registry lists it. */
export interface ServiceModule {
  readonly name: ServiceModuleName;
  /** its one line in `gatehouse --help` (generated into `SERVICE_SUMMARIES`, libs/contracts' service-names.ts) */
  readonly summary: string;
  /** the descriptor of its public proto service, if it has one (`authn` → gatehouse.authn.v1.AuthnService) */
  readonly publicApi?: ServiceName;
  /** the descriptor of its internal proto service, if it has one */
  readonly internalApi?: InternalServiceName;
  /** its subgraph SDL (composed into gateway/supergraph.graphql at build time), if it has a subgraph */
  readonly typeDefs?: DocumentNode;
  /** the internal APIs of peers it calls (split mode: `--<peer>-address` flags) */
  readonly calls: readonly InternalServiceName[];
  /** several replicas behind the gateway (its address flags take comma lists) */
  readonly replicated?: boolean;
  /**
   * The gateway cannot do its job without it (issue 37 §4): true for authn, which signs up, logs in and
   * refreshes every user and serves the hosted login page. The gateway's `/readyz` is 503 while an
   * essential service is down; any other service being down leaves the gateway Ready (its `/readyz`
   * body lists it as down) and only that service's routes answer 503.
   */
  readonly essential?: boolean;
  /** `--<flag>` values it cannot run without in split mode, with the reason for the FATAL line */
  readonly requires?: ReadonlyArray<{ key: keyof Config; why: string }>;
  /** Builds the service in this process from the one Config. */
  build(config: Config, shared: ServiceShared): Promise<ServiceRuntime>;
  /**
   * `gatehouse reseal` (issue 32), for a service that seals values at rest: one pass re-sealing them
   * under the first `--encryption-key` on its database, then closes it.
   * @returns per `<table>.<column>`: values re-sealed, and values no key of the ring opens
   */
  reseal?(config: Config, logger: Logger): Promise<Record<string, { resealed: number; unreadable: number }>>;
}

/** The descriptor names of every proto service a module serves (public, then internal). */
export function descriptorsOf(module: ServiceModule): DescriptorName[] {
  return [...(module.publicApi ? [module.publicApi] : []), ...(module.internalApi ? [module.internalApi] : [])];
}
