/**
 * @module test/e2e/otlp-receiver
 * An OTLP/HTTP trace receiver of the tests' own (OTLP specification, "OTLP/HTTP"): an HTTP server
 * on 127.0.0.1 that accepts `POST /v1/traces` with an `application/x-protobuf`
 * ExportTraceServiceRequest, decodes it with protobufjs against the fields of
 * opentelemetry-proto's `trace/v1/trace.proto` the tests read, and keeps every span.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** The subset of opentelemetry-proto (collector/trace/v1, trace/v1, common/v1, resource/v1) read here; unknown fields are skipped. */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; } }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
}
`;
const Request = protobuf.parse(OTLP_TRACE_PROTO, { keepCase: true }).root.lookupType('otlp.ExportTraceServiceRequest');

/** OTLP SpanKind numbers (trace.proto). */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of `--otlp-endpoint` */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** content types of the requests received */
  readonly contentTypes: string[];
  /** resolves once `predicate` holds over the spans received so far */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface KeyValue { key: string; value?: Record<string, unknown> }
const hex = (b: Uint8Array | undefined): string => Buffer.from(b ?? []).toString('hex');
const attributes = (kvs: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, Object.values(kv.value ?? {})[0]]));

/** Starts the receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const decoded = Request.toObject(Request.decode(Buffer.concat(chunks)), { defaults: false, longs: Number }) as {
        resource_spans?: Array<{ resource?: { attributes?: KeyValue[] }; scope_spans?: Array<{ spans?: Array<Record<string, any>> }> }>;
      };
      for (const rs of decoded.resource_spans ?? []) {
        const service = String(attributes(rs.resource?.attributes)['service.name'] ?? '');
        for (const ss of rs.scope_spans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              service, traceId: hex(s.trace_id), spanId: hex(s.span_id), parentSpanId: hex(s.parent_span_id),
              name: String(s.name), kind: Number(s.kind ?? 0), attributes: attributes(s.attributes),
            });
          }
        }
      }
      // an empty ExportTraceServiceResponse: full success
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    async waitFor(predicate, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > until) throw new Error(`spans never matched; received: ${spans.map((s) => `${s.service}:${s.name}`).join(', ')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      return spans;
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
