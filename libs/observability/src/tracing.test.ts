/**
 * Tracing helpers (issue 15): off by default and then free of spans and headers; on, log lines
 * written inside a span carry its ids, and the W3C `traceparent` round-trips through a carrier.
 */
import { describe, expect, it, afterAll } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import {
  createLogger, currentTraceparent, extractTraceContext, injectTraceContext, startTracing, traceFields, tracingEnabled, withSpan,
} from './index.ts';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('tracing off (no --otlp-endpoint)', () => {
  it('runs the function without a span, writes no header and adds no log field', async () => {
    expect(tracingEnabled()).toBe(false);
    const headers: Record<string, string> = {};
    const out = capture();
    const value = await withSpan('x', {}, async (span) => {
      injectTraceContext((k, v) => { headers[k] = v; });
      createLogger('info', out.stream).info('inside');
      return span.isRecording();
    });
    expect(value).toBe(false);
    expect(headers).toEqual({});
    expect(currentTraceparent()).toBeUndefined();
    expect(traceFields()).toEqual({});
    expect(out.lines()[0]).not.toHaveProperty('trace_id');
  });
});

describe('tracing on', () => {
  const bodies: Buffer[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { bodies.push(Buffer.concat(chunks)); res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(); });
  });
  afterAll(async () => { await new Promise<void>((r) => receiver.close(() => r())); });

  it('puts trace_id and span_id on log lines inside a span, propagates traceparent and exports on shutdown', async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const tracing = startTracing({ endpoint: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, serviceName: 'unit' });
    const out = capture();
    const logger = createLogger('info', out.stream);
    let ids: { traceId: string; spanId: string } | undefined;
    let carried = '';
    await withSpan('outer', {}, async (span) => {
      ids = span.spanContext();
      logger.info('inside');
      injectTraceContext((k, v) => { if (k === 'traceparent') carried = v; });
    });
    logger.info('outside');
    expect(carried).toBe(`00-${ids!.traceId}-${ids!.spanId}-01`);
    const [inside, outside] = out.lines();
    expect(inside).toMatchObject({ msg: 'inside', trace_id: ids!.traceId, span_id: ids!.spanId });
    expect(outside).not.toHaveProperty('trace_id');

    // a child started from the extracted context belongs to the same trace
    await withSpan('child', { parent: extractTraceContext({ traceparent: carried }) }, async (child) => {
      expect(child.spanContext().traceId).toBe(ids!.traceId);
      expect(traceFields()).toEqual({ trace_id: ids!.traceId, span_id: child.spanContext().spanId });
    });
    await tracing.shutdown();
    expect(bodies.length).toBeGreaterThan(0);
    expect(Buffer.concat(bodies).includes(Buffer.from('outer'))).toBe(true);
  });
});
