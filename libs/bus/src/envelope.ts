/**
 * @module @gatehouse/bus/envelope
 * Building and checking envelopes and consumer options (shared by both bus implementations).
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { currentTraceparent, extractTraceContext, SpanKind, withSpan, type TraceCarrier } from '@gatehouse/observability';
import type { ConsumerOptions, Envelope } from './bus.ts';

/** dotted lower-case: `user.signup`, `email.send`, `authz.model.written` */
const NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
/** JetStream durable names allow no dots, wildcards or whitespace */
const DURABLE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A new envelope: id = random UUIDv4, occurredAt = now in Unix seconds, and the active span's
 * `traceparent` when tracing is on.
 */
export function newEnvelope<T>(name: string, source: string, data: T): Envelope<T> {
  assertName(name);
  const traceparent = currentTraceparent();
  return { id: randomUUID(), name, source, occurredAt: Math.floor(Date.now() / 1000), data, ...(traceparent ? { traceparent } : {}) };
}

/**
 * Runs a consumer's handler for `envelope` inside a CONSUMER span whose parent is the trace context
 * the message carried (`carrier`: NATS headers, or the envelope's own `traceparent` in process).
 */
export function inConsumerSpan<T>(envelope: Envelope, durable: string, carrier: TraceCarrier, fn: () => Promise<T>): Promise<T> {
  return withSpan(`${envelope.name} process`, {
    kind: SpanKind.CONSUMER,
    parent: extractTraceContext(carrier),
    attributes: { 'messaging.operation.type': 'process', 'messaging.destination.name': envelope.name, 'messaging.consumer.group.name': durable, 'messaging.message.id': envelope.id },
  }, fn);
}

/** @throws AppError `invalid_argument` unless `name` is a dotted lower-case event name. */
export function assertName(name: string): void {
  if (typeof name !== 'string' || !NAME.test(name)) throw new AppError('invalid_argument', `invalid event name: ${String(name)}`);
}

/** @throws AppError `invalid_argument` for an envelope missing id, name, source or occurredAt. */
export function assertEnvelope(e: Envelope): void {
  if (!e || typeof e.id !== 'string' || e.id.length === 0) throw new AppError('invalid_argument', 'envelope id is required');
  assertName(e.name);
  if (typeof e.source !== 'string' || e.source.length === 0) throw new AppError('invalid_argument', 'envelope source is required');
  if (!Number.isFinite(e.occurredAt)) throw new AppError('invalid_argument', 'envelope occurredAt must be Unix seconds');
}

/** @throws AppError `invalid_argument` for unusable consumer options. */
export function assertConsumerOptions(o: ConsumerOptions): void {
  if (!DURABLE.test(o.durable)) throw new AppError('invalid_argument', `invalid durable consumer name: ${o.durable}`);
  if (!o.names.length) throw new AppError('invalid_argument', 'a consumer needs at least one envelope name');
  o.names.forEach(assertName);
  if (!Number.isInteger(o.maxAttempts) || o.maxAttempts < 1) throw new AppError('invalid_argument', 'maxAttempts must be an integer >= 1');
  if (o.backoffMs.some((b) => !Number.isFinite(b) || b < 0)) throw new AppError('invalid_argument', 'backoffMs values must be >= 0');
}

/** Wait before attempt `attempt + 1` (attempt is 1-based); the last backoff value repeats. */
export function backoffFor(backoffMs: readonly number[], attempt: number): number {
  if (!backoffMs.length) return 0;
  return backoffMs[Math.min(attempt - 1, backoffMs.length - 1)]!;
}
