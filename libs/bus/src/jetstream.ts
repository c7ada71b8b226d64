/**
 * @module @gatehouse/bus/jetstream
 * The split-mode bus on NATS JetStream (ARCHITECTURE §4): one file-backed stream `<stream>` on
 * `<prefix>.>`; an envelope goes to `<prefix>.<name>` with `Nats-Msg-Id` = envelope id (dedup in
 * a two-minute window); consumers are durable pull consumers with explicit ack, `max_deliver` =
 * maxAttempts, retries by `nak(delay)` and `term()` after the last failed attempt.
 */
import { connect, headers as natsHeaders, nanos } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { ConsumerConfig, ConsumerMessages, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { dependencyState, injectTraceContext, SpanKind, tracingEnabled, withSpan, type DependencyCheck, type Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';
import type { Bus, ConsumerOptions, Envelope, Subscription } from './bus.ts';
import { assertConsumerOptions, assertEnvelope, backoffFor, inConsumerSpan } from './envelope.ts';

export interface JetStreamBusOptions {
  /** `nats://127.0.0.1:4222` (comma-separated for several servers) */
  url: string;
  logger: Logger;
  /** stream name, default `GATEHOUSE` */
  stream?: string;
  /** subject prefix, default `gatehouse` */
  subjectPrefix?: string;
  /** ms to wait for a PubAck before publish rejects (default 5000) */
  publishTimeoutMs?: number;
}

const DUPLICATE_WINDOW_MS = 120_000;
const ACK_WAIT_MS = 30_000;
const MAX_ACK_PENDING = 64;
const RESTART_DELAY_MS = 1000;

/** true when the server supports `filter_subjects` (nats-server 2.10+) */
function supportsFilterSubjects(version: string | undefined): boolean {
  const [maj = 0, min = 0] = (version ?? '0.0.0').split('.').map((x) => Number.parseInt(x, 10));
  return maj > 2 || (maj === 2 && min >= 10);
}

async function ensureStream(jsm: JetStreamManager, stream: string, prefix: string): Promise<void> {
  const config = {
    name: stream,
    subjects: [`${prefix}.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    duplicate_window: nanos(DUPLICATE_WINDOW_MS),
  };
  try {
    const info = await jsm.streams.info(stream);
    const subjects = new Set([...(info.config.subjects ?? []), ...config.subjects]);
    await jsm.streams.update(stream, { ...info.config, subjects: [...subjects], duplicate_window: config.duplicate_window });
  } catch (err) {
    if ((err as { code?: number }).code !== 404 && !/not found/i.test(String((err as Error).message))) throw err;
    await jsm.streams.add(config);
  }
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
  try {
    await jsm.consumers.info(stream, config.durable_name);
    await jsm.consumers.update(stream, config.durable_name, {
      max_deliver: config.max_deliver,
      ack_wait: config.ack_wait,
      max_ack_pending: config.max_ack_pending,
      ...(config.filter_subjects ? { filter_subjects: config.filter_subjects } : {}),
      ...(config.filter_subject ? { filter_subject: config.filter_subject } : {}),
    });
  } catch (err) {
    if (!/not found/i.test(String((err as Error).message))) throw err;
    await jsm.consumers.add(stream, config);
  }
}

/** `nats://user:pw@host:4222` → `host:4222` (never the credentials). */
function natsTarget(server: string): string {
  try {
    const u = new URL(server.includes('://') ? server : `nats://${server}`);
    return `${u.hostname}:${u.port || '4222'}`;
  } catch {
    return 'nats';
  }
}

/**
 * Connects to NATS (reconnecting forever), creates or updates the stream and returns the bus.
 * @throws AppError `unavailable` when NATS cannot be reached or JetStream is not enabled.
 */
export async function createJetStreamBus(opts: JetStreamBusOptions): Promise<Bus> {
  const stream = opts.stream ?? 'GATEHOUSE';
  const prefix = opts.subjectPrefix ?? 'gatehouse';
  const publishTimeout = opts.publishTimeoutMs ?? 5000;
  const logger = opts.logger.child({ component: 'bus', transport: 'jetstream', stream });
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  try {
    nc = await connect({ servers: opts.url.split(','), name: 'gatehouse', maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    jsm = await jetstreamManager(nc);
    await ensureStream(jsm, stream, prefix);
  } catch (cause) {
    throw new AppError('unavailable', `cannot use NATS JetStream at ${opts.url}`, { cause });
  }
  const conn = nc;
  const manager = jsm;
  const js = jetstream(conn);
  const target = opts.url.split(',').map(natsTarget).join(',');
  const state = dependencyState(logger, 'nats', target);
  void (async () => {
    for await (const s of conn.status()) {
      if (s.type === 'disconnect') state.down(new Error('disconnected from the server'));
      else if (s.type === 'reconnect') state.up();
    }
  })().catch(() => undefined);
  const readiness: DependencyCheck = {
    name: 'nats', target, logsOwnState: true,
    // a round trip to the server: refused while disconnected (the client buffers, so rtt would wait)
    check: async () => {
      if (conn.isClosed()) throw new Error('the connection is closed');
      if (state.isDown) throw new Error('disconnected from the server');
      await conn.rtt();
    },
  };
  const subs = new Set<Subscription>();
  const subject = (name: string): string => `${prefix}.${name}`;

  function runConsumer(durable: string, options: ConsumerOptions, config: Partial<ConsumerConfig> & { durable_name: string }) {
    let stopped = false;
    let messages: ConsumerMessages | undefined;
    const inflight = new Set<Promise<void>>();

    async function handle(m: JsMsg): Promise<void> {
      const attempt = m.info.deliveryCount;
      const isLastAttempt = attempt >= options.maxAttempts;
      let envelope: Envelope;
      try {
        envelope = m.json<Envelope>();
        assertEnvelope(envelope);
      } catch (err) {
        logger.error({ err, durable, subject: m.subject, seq: m.seq }, 'malformed envelope; terminated');
        m.term('malformed envelope');
        return;
      }
      // a long handler keeps its claim: without this JetStream redelivers after ack_wait
      const keepAlive = setInterval(() => m.working(), ACK_WAIT_MS / 2);
      try {
        // the publisher's trace context rides in the message headers (W3C `traceparent`)
        const carrier = tracingEnabled() ? { traceparent: m.headers?.get('traceparent') || undefined, tracestate: m.headers?.get('tracestate') || undefined } : {};
        await inConsumerSpan(envelope, durable, carrier, () => options.handler(envelope, { attempt, isLastAttempt }));
        m.ack();
      } catch (err) {
        const log = { err, durable, event_id: envelope.id, event: envelope.name, attempt };
        if (isLastAttempt) {
          logger.warn(log, 'handler failed on the last attempt; message terminated');
          m.term('handler failed on the last attempt');
        } else {
          const wait = backoffFor(options.backoffMs, attempt);
          logger.warn({ ...log, retry_in_ms: wait }, 'handler failed; will retry');
          m.nak(wait);
        }
      } finally {
        clearInterval(keepAlive);
      }
    }

    const loop = (async () => {
      while (!stopped) {
        try {
          await ensureConsumer(manager, stream, config);
          const consumer = await js.consumers.get(stream, durable);
          messages = await consumer.consume({ max_messages: MAX_ACK_PENDING });
          const current = messages;
          void (async () => {
            for await (const s of current.status()) {
              if (s.type === 'consumer_deleted' || s.type === 'consumer_not_found' || s.type === 'stream_not_found') {
                logger.warn({ durable, status: s.type }, 'consumer lost; recreating');
                current.stop();
              }
            }
          })().catch(() => undefined);
          for await (const m of current) {
            const p = handle(m);
            inflight.add(p);
            void p.finally(() => inflight.delete(p));
          }
        } catch (err) {
          if (stopped) break;
          logger.warn({ err, durable }, 'consume loop failed; restarting');
        }
        if (!stopped) await new Promise((r) => setTimeout(r, RESTART_DELAY_MS));
      }
    })();

    return async () => {
      stopped = true;
      messages?.stop();
      await loop;
      await Promise.allSettled([...inflight]);
    };
  }

  return {
    readiness,
    async publish(envelope: Envelope): Promise<void> {
      assertEnvelope(envelope);
      if (conn.isClosed()) throw new AppError('unavailable', 'the bus is closed');
      // the trace context goes in headers, not in the body: a PRODUCER span's, child of the caller's
      const { traceparent: _inHeaders, ...body } = envelope;
      await withSpan(`${envelope.name} publish`, {
        kind: SpanKind.PRODUCER,
        attributes: { 'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': subject(envelope.name), 'messaging.message.id': envelope.id },
      }, async () => {
        let h: ReturnType<typeof natsHeaders> | undefined;
        injectTraceContext((key, value) => { (h ??= natsHeaders()).set(key, value); });
        try {
          await js.publish(subject(envelope.name), JSON.stringify(body), { msgID: envelope.id, timeout: publishTimeout, ...(h ? { headers: h } : {}) });
        } catch (cause) {
          throw new AppError('unavailable', `publishing ${envelope.name} to JetStream failed`, { cause });
        }
      });
    },

    async consume(options: ConsumerOptions): Promise<Subscription> {
      assertConsumerOptions(options);
      const base = {
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        max_deliver: options.maxAttempts,
        ack_wait: nanos(ACK_WAIT_MS),
        max_ack_pending: MAX_ACK_PENDING,
      };
      const names = [...new Set(options.names)];
      let plans: [string, Partial<ConsumerConfig> & { durable_name: string }][];
      if (names.length === 1) {
        plans = [[options.durable, { ...base, durable_name: options.durable, filter_subject: subject(names[0]!) }]];
      } else if (supportsFilterSubjects(conn.info?.version)) {
        plans = [[options.durable, { ...base, durable_name: options.durable, filter_subjects: names.map(subject) }]];
      } else {
        // nats-server < 2.10 has no filter_subjects: one durable per name, `<durable>__<name>`
        plans = names.map((n) => {
          const d = `${options.durable}__${n.replaceAll('.', '_')}`;
          return [d, { ...base, durable_name: d, filter_subject: subject(n) }];
        });
      }
      try {
        for (const [, config] of plans) await ensureConsumer(manager, stream, config);
      } catch (cause) {
        throw new AppError('unavailable', `cannot create consumer ${options.durable}`, { cause });
      }
      const stops = plans.map(([d, config]) => runConsumer(d, options, config));
      const sub: Subscription = {
        async stop() {
          subs.delete(sub);
          await Promise.all(stops.map((s) => s()));
        },
      };
      subs.add(sub);
      return sub;
    },

    async close(): Promise<void> {
      await Promise.all([...subs].map((s) => s.stop()));
      if (!conn.isClosed()) await conn.drain();
    },
  };
}
