/**
 * @module @gatehouse/observability/grpc-metrics
 * gRPC server metrics (issue 15, "observability past the HTTP port"): every unary call a gRPC
 * listener answers, the public port and each service's own port alike, is counted in
 * `gatehouse_grpc_server_handled_total` and timed in `gatehouse_grpc_server_duration_seconds`, labelled
 * by the full method (`/gatehouse.authn.v1.AuthnService/Login`) and the gRPC status code name
 * (`OK`, `INVALID_ARGUMENT`, ...; the names of the gRPC status-codes document). Methods are the
 * protos' (a fixed set), so the label cardinality stays bounded.
 */
import { status as grpcStatus } from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { registerRequestSeries, type Series } from './request-series.ts';

/**
 * Records one answered call.
 * @param method the full method path, `/<package>.<Service>/<Method>`
 * @param code the gRPC status code (0 = OK)
 * @param seconds from the call's arrival to its answer
 */
export type GrpcCallObserver = (method: string, code: number, seconds: number) => void;

/** `0` → `OK`, `3` → `INVALID_ARGUMENT`; an unknown number is kept as its digits. */
const CODE_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(grpcStatus).filter(([, v]) => typeof v === 'number').map(([k, v]) => [v as number, k]),
);

/**
 * Registers (or reuses, so all-in-one registers once) the gRPC server metrics on `registry` and
 * returns the observer a gRPC listener calls per answered call.
 * @throws Error when `registry` holds another kind of metric under one of the two names
 */
export function createGrpcServerMetrics(registry: Registry): GrpcCallObserver {
  const table = registerRequestSeries(registry, {
    counter: { name: 'gatehouse_grpc_server_handled_total', help: 'gRPC calls answered, by full method and status code' },
    histogram: {
      name: 'gatehouse_grpc_server_duration_seconds', help: 'gRPC call duration in seconds, by full method and status code',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    },
    labelNames: ['method', 'code'],
  });
  // method → code → series: a call builds no label object once its series exists
  const known = new Map<string, Map<number, Series>>();
  return (method, code, seconds) => {
    let byCode = known.get(method);
    if (byCode === undefined) known.set(method, (byCode = new Map()));
    let s = byCode.get(code);
    if (s === undefined) byCode.set(code, (s = table.series({ method, code: CODE_NAMES.get(code) ?? String(code) })));
    s.record(seconds);
  };
}
