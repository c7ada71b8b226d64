/**
 * @module @gatehouse/observability/tracing
 * OpenTelemetry traces (issue 15): one trace per request across the gateway, the services, the
 * outbox relay, the bus and the notifications worker. The SDK (`@opentelemetry/sdk-node`) starts
 * only when `--otlp-endpoint` is given; spans are then exported over OTLP/HTTP protobuf
 * (`<endpoint>/v1/traces`, OTLP specification §"OTLP/HTTP"). Context travels as the W3C Trace
 * Context `traceparent`/`tracestate` pair (W3C Recommendation "Trace Context" §3) in HTTP headers,
 * gRPC metadata, NATS message headers and the outbox row.
 *
 * Off (the default) costs one boolean test per call site: {@link withSpan} calls its function
 * directly, {@link injectTraceContext} writes nothing and {@link traceFields} returns an empty object.
 */
import {
  context, propagation, ROOT_CONTEXT, SpanStatusCode, trace,
  type Context, type Span, type SpanOptions, type TextMapGetter,
} from '@opentelemetry/api';
import { createRequire } from 'node:module';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtlpExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type * as OtelSdkNode from '@opentelemetry/sdk-node';
import type * as OtelSdkTrace from '@opentelemetry/sdk-trace';

export { SpanKind } from '@opentelemetry/api';
export type { Context, Span } from '@opentelemetry/api';

const TRACER = 'gatehouse';
let enabled = false;

/** A header bag: HTTP headers, gRPC metadata copied out, NATS headers copied out, an outbox row. */
export type TraceCarrier = Record<string, string | string[] | undefined>;

const getter: TextMapGetter<TraceCarrier> = {
  keys: (c) => Object.keys(c),
  get: (c, key) => c[key] ?? c[key.toLowerCase()],
};

export interface TracingOptions {
  /** OTLP/HTTP base URL (`http://collector:4318`); spans go to `<endpoint>/v1/traces` */
  endpoint: string;
  /** `service.name` of the resource: the command (`gateway`, `authn`, … or `gatehouse` for all-in-one) */
  serviceName: string;
  /** `service.version` of the resource */
  serviceVersion?: string;
  /** ms between batch exports (default 1000) */
  exportIntervalMs?: number;
}

export interface Tracing {
  /** flushes the spans still queued and stops the SDK */
  shutdown(): Promise<void>;
}

/** True when {@link startTracing} ran in this process (spans are recorded and exported). */
export function tracingEnabled(): boolean {
  return enabled;
}

/**
 * Starts the OpenTelemetry Node SDK for this process: W3C trace-context propagator, parent-based
 * always-on sampling, a batch processor exporting OTLP/HTTP protobuf. Reads no `OTEL_*` variable
 * for the exporter (flags are the only configuration, STYLE §5); no auto-instrumentation is
 * loaded, the spans are the ones this module's helpers open.
 * @throws TypeError when `endpoint` is not a URL
 */
export function startTracing(opts: TracingOptions): Tracing {
  const url = new URL('v1/traces', opts.endpoint.endsWith('/') ? opts.endpoint : `${opts.endpoint}/`).toString();
  // The SDK and the exporter load here, not with this module (issue 22 §3: with tracing off, the default,
  // they cost about a tenth of the start-up CPU and their memory for nothing).
  const require = createRequire(import.meta.url);
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof OtelCore;
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpExporter;
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof OtelSdkNode;
  const { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler } = require('@opentelemetry/sdk-trace') as typeof OtelSdkTrace;
  const exporter = new OTLPTraceExporter({ url });
  const sdk = new NodeSDK({
    serviceName: opts.serviceName,
    autoDetectResources: false,
    instrumentations: [],
    metricReaders: [],
    logRecordProcessors: [],
    textMapPropagator: new W3CTraceContextPropagator(),
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: opts.exportIntervalMs ?? 1000 })],
  });
  sdk.start();
  enabled = true;
  return {
    async shutdown() {
      enabled = false;
      await sdk.shutdown();
    },
  };
}

/**
 * Runs `fn` inside a new span named `name` (child of `parent`, else of the active context) and
 * ends it when `fn` settles; a thrown error marks the span as failed and is rethrown. With tracing
 * off, `fn` runs directly with a non-recording span.
 */
export async function withSpan<T>(
  name: string,
  options: SpanOptions & { parent?: Context },
  fn: (span: Span) => Promise<T> | T,
): Promise<T> {
  if (!enabled) return fn(trace.wrapSpanContext(INVALID));
  const { parent, ...spanOptions } = options;
  return trace.getTracer(TRACER).startActiveSpan(name, spanOptions, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message ?? String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

const INVALID = { traceId: '00000000000000000000000000000000', spanId: '0000000000000000', traceFlags: 0 };

/**
 * Starts a span the caller ends (for callbacks such as an HTTP response's `close`), and runs `fn`
 * in its context. With tracing off, `fn` runs directly and the returned span is non-recording.
 */
export function runInSpan<T>(name: string, options: SpanOptions & { parent?: Context }, fn: (span: Span) => T): T {
  if (!enabled) return fn(trace.wrapSpanContext(INVALID));
  const { parent, ...spanOptions } = options;
  const span = trace.getTracer(TRACER).startSpan(name, spanOptions, parent ?? context.active());
  return context.with(trace.setSpan(parent ?? context.active(), span), () => fn(span));
}

/** Marks `span` failed with `message` (no-op on a non-recording span). */
export function failSpan(span: Span, message: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/**
 * Writes the active context's `traceparent` (and `tracestate`) into `carrier` via `set`; writes
 * nothing when tracing is off or no span is active.
 */
export function injectTraceContext(set: (key: string, value: string) => void, ctx?: Context): void {
  if (!enabled) return;
  const bag: Record<string, string> = {};
  propagation.inject(ctx ?? context.active(), bag);
  for (const [k, v] of Object.entries(bag)) set(k, v);
}

/** The context a carrier's `traceparent` names (the root context when absent, or tracing is off). */
export function extractTraceContext(carrier: TraceCarrier): Context {
  if (!enabled) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, getter);
}

/** The active context's `traceparent` value, or undefined (tracing off, no active span). */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  let out: string | undefined;
  injectTraceContext((k, v) => { if (k === 'traceparent') out = v; });
  return out;
}

/**
 * `{ trace_id, span_id }` of the active span, for the pino mixin: every log line written inside a
 * span carries them (issue 15); `{}` otherwise.
 */
export function traceFields(): Record<string, string> {
  if (!enabled) return {};
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
