/**
 * @module @gatehouse/bus/in-process
 * The all-in-one bus: the same semantics as the JetStream bus, in memory. Durable consumers keep
 * their subscriptions across stop/start within the process (messages published while a durable is
 * stopped are delivered when it starts again); a handler failure is retried after the backoff up
 * to `maxAttempts`, the last attempt flagged; envelope ids are deduplicated for two minutes like
 * the JetStream stream's duplicate window. `handled` says when every consumer is done with an
 * envelope, so the outbox relay keeps its row until then (a crash redelivers it at the next start).
 */
import { currentTraceparent, type Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';
import type { Bus, ConsumerOptions, Envelope, Subscription } from './bus.ts';
import { assertConsumerOptions, assertEnvelope, backoffFor, inConsumerSpan } from './envelope.ts';

const DUPLICATE_WINDOW_MS = 120_000;

interface Pending {
  envelope: Envelope;
  attempt: number;
  /** called once this consumer is done with the envelope (acked, or terminated on its last attempt) */
  done: () => void;
}

interface Durable {
  names: Set<string>;
  options: ConsumerOptions | null; // null while stopped
  backlog: Pending[];
  /** retry timers and what each will redeliver */
  timers: Map<NodeJS.Timeout, Pending>;
  inflight: Set<Promise<void>>;
}

/** Creates the in-process bus (ARCHITECTURE §1 all-in-one). */
export function createInProcessBus(opts: { logger: Logger }): Bus {
  const logger = opts.logger.child({ component: 'bus', transport: 'in-process' });
  const durables = new Map<string, Durable>();
  const seen = new Map<string, number>();
  /** envelope id → resolves when every consumer subscribed at publish time is done with it (issue 32) */
  const handling = new Map<string, Promise<void>>();
  let closed = false;

  function deliver(d: Durable, p: Pending): void {
    const o = d.options;
    if (!o || closed) {
      d.backlog.push(p);
      return;
    }
    const isLastAttempt = p.attempt >= o.maxAttempts;
    const run = (async () => {
      try {
        await inConsumerSpan(p.envelope, o.durable, { traceparent: p.envelope.traceparent }, () => o.handler(p.envelope, { attempt: p.attempt, isLastAttempt }));
        p.done();
      } catch (err) {
        if (isLastAttempt) {
          logger.warn({ err, durable: o.durable, event_id: p.envelope.id, event: p.envelope.name, attempt: p.attempt }, 'handler failed on the last attempt; message terminated');
          p.done();
          return;
        }
        const wait = backoffFor(o.backoffMs, p.attempt);
        logger.warn({ err, durable: o.durable, event_id: p.envelope.id, event: p.envelope.name, attempt: p.attempt, retry_in_ms: wait }, 'handler failed; will retry');
        const next: Pending = { envelope: p.envelope, attempt: p.attempt + 1, done: p.done };
        const t = setTimeout(() => {
          d.timers.delete(t);
          deliver(d, next);
        }, wait);
        // a stopped consumer must not lose the retry: stop() moves it to the backlog
        d.timers.set(t, next);
      }
    })();
    d.inflight.add(run);
    void run.finally(() => d.inflight.delete(run));
  }

  return {
    async publish(envelope: Envelope): Promise<void> {
      if (closed) throw new AppError('unavailable', 'the bus is closed');
      assertEnvelope(envelope);
      const now = Date.now();
      for (const [id, at] of seen) {
        if (now - at <= DUPLICATE_WINDOW_MS) break;
        seen.delete(id);
      }
      if (seen.has(envelope.id)) return;
      seen.set(envelope.id, now);
      // the publisher's span (the outbox relay's) is the consumers' parent, as a NATS header would carry it
      const traceparent = currentTraceparent() ?? envelope.traceparent;
      if (traceparent) envelope = { ...envelope, traceparent };
      const waits: Array<Promise<void>> = [];
      for (const d of durables.values()) {
        if (!d.names.has(envelope.name)) continue;
        let done!: () => void;
        waits.push(new Promise<void>((resolve) => { done = resolve; }));
        const sent = envelope;
        setImmediate(() => deliver(d, { envelope: sent, attempt: 1, done }));
      }
      if (waits.length > 0) {
        const id = envelope.id;
        const all = Promise.all(waits).then(() => { handling.delete(id); });
        handling.set(id, all);
      }
    },

    handled(envelope: Envelope): Promise<void> {
      return handling.get(envelope.id) ?? Promise.resolve();
    },

    async consume(options: ConsumerOptions): Promise<Subscription> {
      if (closed) throw new AppError('unavailable', 'the bus is closed');
      assertConsumerOptions(options);
      let d = durables.get(options.durable);
      if (d?.options) throw new AppError('already_exists', `consumer ${options.durable} is already running`);
      if (!d) {
        d = { names: new Set(), options: null, backlog: [], timers: new Map(), inflight: new Set() };
        durables.set(options.durable, d);
      }
      d.names = new Set(options.names);
      d.options = options;
      const durable = d;
      const backlog = durable.backlog.splice(0).filter((p) => durable.names.has(p.envelope.name));
      for (const p of backlog) setImmediate(() => deliver(durable, p));
      return {
        async stop() {
          if (durable.options !== options) return;
          durable.options = null;
          for (const [t, next] of durable.timers) {
            clearTimeout(t);
            durable.backlog.push(next);
          }
          durable.timers.clear();
          await Promise.allSettled([...durable.inflight]);
        },
      };
    },

    async close(): Promise<void> {
      closed = true;
      for (const d of durables.values()) {
        for (const t of d.timers.keys()) clearTimeout(t);
        d.timers.clear();
        d.options = null;
      }
      await Promise.allSettled([...durables.values()].flatMap((d) => [...d.inflight]));
    },
  };
}
