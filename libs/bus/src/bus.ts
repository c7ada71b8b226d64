/**
 * @module @gatehouse/bus/bus
 * One publish/consume interface over NATS JetStream (split mode) and an in-process bus
 * (all-in-one). Events leave a service only through the transactional outbox (ARCHITECTURE §4).
 */
import type { DependencyCheck } from '@gatehouse/observability';

/**
 * A domain event (`user.signup`, `user.login`, ...; behaviour.md §8) or a delivery job
 * (`email.send`, `sms.send`, `webhook.deliver`).
 */
export interface Envelope<T = unknown> {
  /** unique id (UUIDv4); consumers are idempotent on it, JetStream dedups on it (Nats-Msg-Id) */
  readonly id: string;
  /** dotted lower-case name: `user.signup`, `email.send` */
  readonly name: string;
  /** owning service that wrote it: `authn`, `authz`, ... */
  readonly source: string;
  /** Unix seconds when the state change committed */
  readonly occurredAt: number;
  readonly data: T;
  /**
   * W3C Trace Context `traceparent` of the span that created the envelope (absent when tracing is
   * off); the outbox keeps it, so the relay's publish continues the request's trace (issue 15).
   * On NATS it travels as a message header, not in the body.
   */
  readonly traceparent?: string;
}

/** What a consumer's handler gets besides the envelope. */
export interface Delivery {
  /** 1 on first delivery, then 2, 3, ... */
  readonly attempt: number;
  /** true when this is the last attempt the consumer's policy allows */
  readonly isLastAttempt: boolean;
}

export interface ConsumerOptions {
  /** durable consumer name, stable across restarts: `notifications-email` */
  readonly durable: string;
  /** envelope names to receive: `email.send`, `user.signup` (exact names) */
  readonly names: readonly string[];
  /** total attempts before giving up (including the first) */
  readonly maxAttempts: number;
  /** waits between attempts in ms: [1000, 2000, 4000, ...]; the last value repeats */
  readonly backoffMs: readonly number[];
  /**
   * Handles one delivery. Resolve = ack. Throw = retry after the backoff, unless this was the last
   * attempt, in which case the message is terminated (the handler records a dead letter itself
   * when `delivery.isLastAttempt`).
   */
  readonly handler: (envelope: Envelope, delivery: Delivery) => Promise<void>;
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface Bus {
  /** Publishes one envelope; resolves once the transport has durably accepted it (JetStream ack). */
  publish(envelope: Envelope): Promise<void>;
  consume(options: ConsumerOptions): Promise<Subscription>;
  close(): Promise<void>;
  /** the broker connection, for `/readyz` (absent: the in-process bus, which cannot be down) */
  readonly readiness?: DependencyCheck;
  /**
   * Only on a bus that keeps nothing itself (the in-process bus): resolves once every consumer that
   * was subscribed to `envelope` when it was published has handled it (its handler resolved, or it was
   * terminated on its last attempt). The outbox relay keeps the row until then, so an event whose
   * handlers had not finished when the process stopped is delivered again at the next start (issue 32).
   * Never resolves for a consumer stopped before it handled the event.
   */
  handled?(envelope: Envelope): Promise<void>;
}
