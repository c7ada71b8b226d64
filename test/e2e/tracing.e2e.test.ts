/**
 * @module test/e2e/tracing
 * OpenTelemetry traces across the deployment (issue 15 "Observability past the HTTP port"): with
 * `--otlp-endpoint` pointing at an OTLP/HTTP receiver of the test's own, one signup with email
 * verification is one trace whose spans cover the gateway, authn, the outbox relay, the bus (NATS
 * JetStream in split mode), the notifications worker and its SMTP send; the context crosses gRPC
 * metadata, the outbox row and NATS message headers as a W3C `traceparent`. The gateway's access-log
 * line carries the trace id.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startDeployment, startSmtpSink, type Deployment, type Mode, type SmtpSink } from '@gatehouse/testing';
import { address, emailFlags, signup } from './email-support.ts';
import { KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.ts';

/** Names from `span` up to its trace's root, following parent span ids. */
function ancestry(span: ReceivedSpan, inTrace: ReceivedSpan[]): ReceivedSpan[] {
  const byId = new Map(inTrace.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let cur = span; cur.parentSpanId !== ''; ) {
    const parent = byId.get(cur.parentSpanId);
    if (!parent) break;
    chain.push(parent);
    cur = parent;
  }
  return chain;
}

describe.each(['split', 'all'] as Mode[])('tracing (%s)', (mode) => {
  let receiver: OtlpReceiver;
  let sink: SmtpSink;
  let d: Deployment;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    sink = await startSmtpSink();
    d = await startDeployment(mode, { flags: [...emailFlags(sink), `--otlp-endpoint=${receiver.endpoint}`, '--log-level=info'] });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await sink?.close();
    await receiver?.close();
  });

  it('one signup is one trace: gateway → authn → outbox relay → bus → notifications → SMTP', async () => {
    const email = address('traced');
    const res = await signup(d.url, email);
    expect(res.status).toBe(200);
    await sink.waitForMail(email);

    // each process exports its spans in its own batches: wait until the SMTP span's chain reaches a root
    const rooted = (all: ReceivedSpan[]): boolean => {
      const smtp = all.find((s) => s.name === 'smtp send');
      return smtp !== undefined && ancestry(smtp, all.filter((s) => s.traceId === smtp.traceId)).at(-1)!.parentSpanId === '';
    };
    const spans = await receiver.waitFor(rooted);
    const smtp = spans.find((s) => s.name === 'smtp send')!;
    const trace = spans.filter((s) => s.traceId === smtp.traceId);
    const chain = ancestry(smtp, trace);
    const root = chain.at(-1)!;
    // the root is the gateway's HTTP span, named after the route template
    expect(root).toMatchObject({ name: 'POST /v1/signup', kind: KIND.SERVER, parentSpanId: '' });
    expect(root.attributes).toMatchObject({ 'http.route': '/v1/signup', 'http.response.status_code': 200 });

    const path = chain.map((s) => `${s.service}:${s.name}`).reverse();
    if (mode === 'split') {
      // one trace id across four processes, linked span to span by the propagated contexts
      expect([...new Set(chain.map((s) => s.service))].reverse()).toEqual(['gateway', 'authn', 'notifications']);
      expect(path).toEqual([
        'gateway:POST /v1/signup',
        expect.stringMatching(/^gateway:\/gatehouse\.authn\.v1\.\w+\/Signup$/), // gRPC client span, context in metadata
        expect.stringMatching(/^authn:\/gatehouse\.authn\.v1\.\w+\/Signup$/), // gRPC server span
        'authn:outbox relay email.send', // the relay, parented by the row's trace_parent
        'authn:email.send publish', // NATS JetStream publish, context in the message headers
        'notifications:email.send process', // the JetStream consumer
        'notifications:smtp send',
      ]);
      expect(chain.map((s) => s.kind).reverse()).toEqual([KIND.SERVER, KIND.CLIENT, KIND.SERVER, KIND.INTERNAL, KIND.PRODUCER, KIND.CONSUMER, KIND.CLIENT]);
    } else {
      // one process: the same chain without the network hops
      expect(path).toEqual([
        'gatehouse:POST /v1/signup',
        'gatehouse:outbox relay email.send',
        'gatehouse:email.send process',
        'gatehouse:smtp send',
      ]);
    }
    // every span of the trace hangs off the tree (no span with a parent outside it)
    const ids = new Set(trace.map((s) => s.spanId));
    expect(trace.filter((s) => s.parentSpanId !== '' && !ids.has(s.parentSpanId)).map((s) => s.name)).toEqual([]);
    expect(receiver.contentTypes.every((t) => t === 'application/x-protobuf')).toBe(true);

    // the gateway's access-log line for this request carries the trace and the root span's ids
    const access = d.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'request' && l.route === '/v1/signup' && l.trace_id === root.traceId);
    expect(access).toMatchObject({ trace_id: root.traceId, span_id: root.spanId, status: 200 });
  }, 60_000);
});
