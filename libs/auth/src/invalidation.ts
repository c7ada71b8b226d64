/**
 * @module @gatehouse/auth/invalidation
 * The notification channel that keeps in-memory answers correct across processes (issue 22 §1): the
 * credential caches (sessions, user activity: behaviour.md §2.1, §2.2) and authz's store revision
 * (§7.1 "every replica uses the new version from its next request after the write returns").
 *
 * A channel is a set of counters, one per topic. A writer calls `publish(topic)` after its write commits
 * and before its response is sent; every process on the channel (the writer too) sees that topic's
 * `version()` change, and a cache compares versions to know whether its answers still hold. While
 * notifications cannot be trusted (connection down, not yet subscribed, or no echo of this process's own
 * heartbeat read for {@link TRUST_POLLS} intervals, as when its event loop was starved), `version()`
 * changes at least every `pollMs`, so a cache re-reads the database at that rate: bounded staleness
 * instead of silence. The next-request guarantee: a publish resolves once every receiver acknowledged,
 * or after {@link PUBLISH_WAIT_POLLS} intervals, when a receiver that has not read it no longer trusts
 * its memory (the argument is on {@link TRUST_POLLS}).
 *
 * Transports: Redis pub/sub (`--redis-url`), PostgreSQL LISTEN/NOTIFY (main database on PostgreSQL),
 * or in process only (this process's writes; other processes' writes within `pollMs` unless
 * `soleWriter`). See libs/auth/README.md "Credential caches".
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { newRedis, type StateLogger } from '@gatehouse/observability';

/** What changed: credentials (sessions, users) or the authz relationship store. */
export type InvalidationTopic = 'credentials' | 'authz';

const TOPICS: readonly InvalidationTopic[] = ['credentials', 'authz'];

/** Default bound on staleness while notifications are down, in milliseconds. */
export const INVALIDATION_POLL_MS = 1000;

/**
 * Heartbeat periods a ping may stay out before the channel is marked down. Two, not one: after an
 * event-loop stall longer than a period (a GC pause, a busy machine) the timer is due at the same turn
 * the echo arrives, and a one-period deadline would call a delivering channel stalled.
 */
export const HEARTBEAT_GRACE_PERIODS = 2;

/**
 * How long, in polling intervals, a publish waits for its receivers' acknowledgements, counted on the
 * writer's clock from the moment the transport accepted the notification. A receiver that has not
 * acknowledged by then answers from memory no longer ({@link TRUST_POLLS}, shorter), so the writer may
 * answer: whichever replica the next request reaches, it either read the notification or re-reads the store.
 */
export const PUBLISH_WAIT_POLLS = 1 + HEARTBEAT_GRACE_PERIODS;

/**
 * How long, in polling intervals, a receiver keeps answering from memory after it SENT the newest ping
 * whose echo it has read (its lease). The transports deliver in order on the receiver's connection: an
 * echo read proves that every notification the transport accepted before that ping was read too. A
 * notification it has not read was therefore accepted before the ping the lease runs from; its writer
 * waited {@link PUBLISH_WAIT_POLLS} intervals from then, longer than this lease, so by the time that
 * writer answered, the receiver no longer trusts its memory ({@link Counters.version}). Half an interval
 * shorter than the wait, a margin for timers and clocks. A healthy receiver pings every interval, so its
 * lease is at most one interval plus a round trip old.
 */
export const TRUST_POLLS = PUBLISH_WAIT_POLLS - 0.5;

/**
 * A peer whose heartbeat was heard within this many polling intervals is waited for by a publish (it
 * pings every interval; a stopped one drops out after this many). Longer than {@link TRUST_POLLS}: a
 * peer not heard for this long sent its last ping longer ago than its lease, so it answers from memory
 * no longer and need not be waited for.
 */
export const PEER_TTL_POLLS = PUBLISH_WAIT_POLLS + 0.5;

/** A process's notification channel. */
export interface InvalidationChannel {
  /** `redis`, `postgres` or `local` (in process only) */
  readonly kind: 'redis' | 'postgres' | 'local';
  /**
   * An integer that changes when any process published `topic`, when the channel went down or came
   * back, and at least every `pollMs` while it is down. Compare for equality only; no I/O.
   */
  version(topic: InvalidationTopic): number;
  /**
   * Tells every process on the channel that `topic` changed. Call after the write commits, before its
   * response: this process's own version moves before the promise resolves, and the others' as soon as
   * the transport delivers. Never throws: a failed publish is logged (the receivers' connection to the
   * same transport is then down too, so they poll).
   */
  publish(topic: InvalidationTopic): Promise<void>;
  /** true while notifications are trusted */
  healthy(): boolean;
  close(): Promise<void>;
}

export interface InvalidationOptions {
  /** staleness bound while notifications are down; default {@link INVALIDATION_POLL_MS} */
  pollMs?: number;
  /** monotonic milliseconds; default `performance.now` */
  nowMs?: () => number;
  /** where `notifications are down` / `back up` go, one line per state change */
  logger?: StateLogger;
  /**
   * Tests only (`--test-notifications-off`): never trust notifications, as if the connection were cut,
   * so tests can show the polling fallback. Default false.
   */
  notificationsOff?: boolean;
}

const SILENT: StateLogger = { info: () => undefined, warn: () => undefined };

/** The counters and the down/up state every transport shares. */
class Counters {
  readonly #n: Record<InvalidationTopic, number> = { credentials: 0, authz: 0 };
  readonly #polledAt: Record<InvalidationTopic, number> = { credentials: 0, authz: 0 };
  #up = false;
  readonly #pollMs: number;
  readonly #now: () => number;
  readonly #log: StateLogger;
  readonly #what: string;
  readonly off: boolean;
  constructor(o: InvalidationOptions, what: string) {
    this.#pollMs = Math.max(1, o.pollMs ?? INVALIDATION_POLL_MS);
    this.#now = o.nowMs ?? (() => performance.now());
    this.#log = o.logger ?? SILENT;
    this.#what = what;
    this.off = o.notificationsOff === true;
  }
  /**
   * The monotonic time this process sent the newest ping whose echo it has read (or subscribed, which
   * also proves delivery from then on): see {@link TRUST_POLLS}. A read later than the lease marks the
   * channel down at once, whatever the heartbeat timer says: a starved process's timer is starved too,
   * and on waking it sends a new ping before it reads the notifications that wait in its socket.
   */
  #trustedFrom = Number.NEGATIVE_INFINITY;
  /**
   * true once the lease was judged in this turn of the event loop: no socket is read until the turn
   * ends, so no notification can arrive before then, and the judgement holds for every read of the
   * turn. Saves a clock read per cached read (≈0.4 µs on a VM whose clock source is a system call).
   */
  #judged = false;
  readonly #unjudge = (): void => { this.#judged = false; };
  /** The heartbeat read the echo of a ping sent at `sentAt` (monotonic ms), or the transport subscribed then. */
  delivered(sentAt: number): void {
    if (sentAt > this.#trustedFrom) this.#trustedFrom = sentAt;
  }
  version(t: InvalidationTopic): number {
    if (this.#up && !this.#judged) {
      this.#judged = true;
      queueMicrotask(this.#unjudge);
      if (this.#now() - this.#trustedFrom > TRUST_POLLS * this.#pollMs) {
        this.down(new Error(`no heartbeat echo for ${TRUST_POLLS} polling intervals: a notification may be unread`));
      }
    }
    if (!this.#up) {
      const now = this.#now();
      if (now - this.#polledAt[t] >= this.#pollMs) {
        this.#polledAt[t] = now;
        this.#n[t]++;
      }
    }
    return this.#n[t];
  }
  bump(t: InvalidationTopic): void {
    this.#n[t]++;
  }
  /** Bumps `t` here, sends, bumps again (a read that overlapped the send is not trusted); a failed send is logged. */
  async publish(t: InvalidationTopic, send: () => Promise<unknown>): Promise<void> {
    this.bump(t);
    try {
      await send();
    } catch (err) {
      this.#log.warn({ channel: this.#what, cause: (err as Error).message }, 'invalidation not published');
    }
    this.bump(t);
  }
  /** Notifications flow again: whatever was missed while down is dropped once more. */
  up(): void {
    if (this.off) return;
    for (const t of TOPICS) this.#n[t]++;
    if (!this.#up) this.#log.info({ channel: this.#what }, 'invalidation notifications are up');
    this.#up = true;
  }
  down(err?: unknown): void {
    for (const t of TOPICS) {
      this.#n[t]++;
      this.#polledAt[t] = this.#now();
    }
    if (this.#up) this.#log.warn({ channel: this.#what, cause: err instanceof Error ? err.message : String(err ?? 'closed') }, 'invalidation notifications are down: polling');
    this.#up = false;
  }
  get healthy(): boolean {
    return this.#up;
  }
}

/** What a transport does with its heartbeat. */
interface Heartbeat {
  /** the transport (re)subscribed (true) or lost its subscription (false) */
  subscribed(on: boolean): void;
  /** a ping (`<sender id>:<seq>`, this process's or a peer's) came in on the transport */
  heard(payload: string): void;
  /** the ids of the other processes whose ping came in within the last {@link PEER_TTL_POLLS} intervals */
  livePeers(): string[];
  /** true while the transport is subscribed (this process hears the channel, its own notifications too) */
  listening(): boolean;
  stop(): void;
}

/**
 * Proves that the channel delivers, not only that it is connected: every `pollMs` a ping carrying this
 * process's id goes out on the transport; a ping not back after `HEARTBEAT_GRACE_PERIODS` periods
 * marks the channel down (a stalled connection, a pooler in transaction mode that swallows
 * notifications), so caches poll; its echo marks it up again (which drops whatever may have been missed)
 * and renews the lease the counters answer from memory under ({@link TRUST_POLLS}, judged on every read).
 * The lateness is judged in the check phase after the timer's turn (`setImmediate`), so an echo that
 * arrived during a stall is read first. Every process hears every other's pings too: that is how a
 * writer knows its peers ({@link Heartbeat.livePeers}).
 * @param me this process's id on the channel (the one its acknowledgements carry)
 */
function startHeartbeat(c: Counters, o: InvalidationOptions, send: (payload: string) => Promise<unknown>, me: string): Heartbeat {
  let seq = 0;
  let awaiting: string | null = null;
  let sentAt = 0;
  let late = 0;
  let on = false;
  const pollMs = Math.max(1, o.pollMs ?? INVALIDATION_POLL_MS);
  const now = o.nowMs ?? (() => performance.now());
  /** other processes on the channel: id → when their last ping came in */
  const peers = new Map<string, number>();
  const ping = (): void => {
    awaiting = `${me}:${++seq}`;
    late = 0;
    sentAt = now();
    send(awaiting).catch(() => undefined);
  };
  const timer = setInterval(() => {
    if (!on) return;
    if (awaiting === null) { ping(); return; }
    setImmediate(() => {
      if (!on || awaiting === null || ++late < HEARTBEAT_GRACE_PERIODS) return;
      c.down(new Error(`a heartbeat did not come back within ${HEARTBEAT_GRACE_PERIODS} polling intervals`));
      ping();
    });
  }, pollMs);
  timer.unref();
  return {
    subscribed(v) {
      on = v;
      awaiting = null;
      // whatever the transport accepts from now on reaches this process, in order
      if (v) c.delivered(now());
      // the first ping at once: peers that count their receivers by heartbeat know this one
      if (v) ping();
    },
    heard(payload) {
      const from = payload.slice(0, payload.indexOf(':'));
      if (from !== me && from !== '') peers.set(from, now());
      if (payload !== awaiting) return;
      awaiting = null;
      c.delivered(sentAt);
      if (!c.healthy) c.up();
    },
    livePeers() {
      const since = now() - PEER_TTL_POLLS * pollMs;
      const live: string[] = [];
      for (const [peer, at] of peers) {
        if (at >= since) live.push(peer);
        else peers.delete(peer);
      }
      return live;
    },
    listening: () => on,
    stop: () => clearInterval(timer),
  };
}

/** Decides whether a publish has been acknowledged enough: by the count of acknowledgements and who sent them. */
type Enough = (count: number, from: ReadonlySet<string>) => boolean;

/**
 * This process's publishes waiting for their receivers' acknowledgements (Redis and PostgreSQL alike).
 * `publish(id, send)` runs `send`, which returns once the transport accepted the notification, with the
 * test of whether the acknowledgements suffice (it may need the transport's answer, e.g. Redis's receiver
 * count); it resolves once they do, or once `waitMs` have passed on the `now` clock since `send` returned
 * (measured, not trusted to one timer: a timer may fire early by the time its turn was late, and a late
 * answer here is what the receivers' lease, {@link TRUST_POLLS}, counts on). `ack(id, from)` records one
 * acknowledgement of publish `id`; the test runs again on each.
 */
function acknowledgements(waitMs: number, now: () => number): { publish(id: string, send: () => Promise<Enough>): Promise<void>; ack(id: string, from?: string): void } {
  const pending = new Map<string, { count: number; from: Set<string>; enough: Enough | null; done: () => void }>();
  return {
    ack(id, from = '') {
      const p = pending.get(id);
      if (p === undefined) return;
      p.count++;
      p.from.add(from);
      if (p.enough?.(p.count, p.from)) p.done();
    },
    async publish(id, send) {
      let done!: () => void;
      const acked = new Promise<void>((resolve) => { done = resolve; });
      const p = { count: 0, from: new Set<string>(), enough: null as Enough | null, done };
      pending.set(id, p);
      let timer: NodeJS.Timeout | undefined;
      try {
        p.enough = await send();
        const deadline = now() + waitMs;
        for (let left = waitMs; left > 0 && !p.enough(p.count, p.from); left = deadline - now()) {
          const waited = await Promise.race([acked.then(() => true), new Promise<false>((resolve) => { timer = setTimeout(resolve, Math.ceil(left), false); })]);
          clearTimeout(timer);
          if (waited) return;
        }
      } finally {
        clearTimeout(timer);
        pending.delete(id);
      }
    },
  };
}

/**
 * In-process channel. With `soleWriter` (no other process writes the data) it is always healthy and
 * exact; without, other processes' writes are noticed within `pollMs` (it never receives them).
 */
export function createLocalInvalidation(o: InvalidationOptions & { soleWriter: boolean }): InvalidationChannel {
  const c = new Counters(o, 'local');
  // no transport between writers and readers: nothing can be delivered late
  c.delivered(Number.POSITIVE_INFINITY);
  if (o.soleWriter) c.up();
  return {
    kind: 'local',
    version: (t) => c.version(t),
    async publish(t) {
      c.bump(t);
    },
    healthy: () => c.healthy,
    async close() {},
  };
}

/**
 * Redis pub/sub: one subscriber connection (channels `<prefix><topic>`, `<prefix>ping` and this process's
 * `<prefix>ack:<id>`) and one for PUBLISH. A notification carries `<publisher id>:<seq>`; every receiver
 * (the publisher too) moves its version, then acknowledges on the publisher's ack channel. `publish`
 * resolves once as many acknowledgements came back as PUBLISH reported receivers and as processes were
 * heard on the ping channel within {@link PEER_TTL_POLLS} intervals (this one included: a peer whose
 * subscription Redis already dropped while it has not noticed yet is not among PUBLISH's receivers), or
 * after {@link PUBLISH_WAIT_POLLS} intervals, by when a receiver that has not read the notification no
 * longer answers from memory ({@link TRUST_POLLS}). Redis answering the publisher does not mean a
 * receiver has read the message (it may still sit in a socket buffer while that receiver serves a
 * request that was sent after the writer's response), so the writer's response waits for the receivers,
 * not for Redis.
 * @param prefix channel prefix, e.g. `gatehouse:<client-id>:invalidate:`
 */
export function createRedisInvalidation(url: string, prefix: string, o: InvalidationOptions = {}): InvalidationChannel {
  const c = new Counters(o, 'redis');
  const sub = newRedis(url, { lazyConnect: false, maxRetriesPerRequest: 2, autoResubscribe: false });
  const pub = newRedis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
  const names = TOPICS.map((t) => `${prefix}${t}`);
  const ping = `${prefix}ping`;
  const me = randomBytes(8).toString('hex');
  const ackChannel = `${prefix}ack:${me}`;
  const acks = acknowledgements(PUBLISH_WAIT_POLLS * Math.max(1, o.pollMs ?? INVALIDATION_POLL_MS), o.nowMs ?? (() => performance.now()));
  let seq = 0;
  const hb = startHeartbeat(c, o, (payload) => pub.publish(ping, payload), me);
  sub.on('message', (channel: string, message: string) => {
    if (channel === ping) return hb.heard(message);
    if (channel === ackChannel) return acks.ack(message);
    const t = channel.slice(prefix.length) as InvalidationTopic;
    if (!TOPICS.includes(t)) return;
    c.bump(t);
    const from = message.slice(0, message.indexOf(':'));
    if (from !== '') pub.publish(`${prefix}ack:${from}`, message).catch(() => undefined);
  });
  /**
   * PUBLISH, then wait until every receiver Redis counted, and as many as the processes heard on the
   * channel, have acknowledged (this one's own acknowledgement among them while it is subscribed: once it
   * came back, every ping Redis sent before the notification has been read here), at most
   * {@link PUBLISH_WAIT_POLLS} intervals.
   * Acknowledgements are counted, not named, so receivers of earlier releases count too.
   */
  const publishAcknowledged = (t: InvalidationTopic): Promise<void> => {
    const id = `${me}:${++seq}`;
    return acks.publish(id, async () => {
      const receivers = Number(await pub.publish(`${prefix}${t}`, id));
      const self = hb.listening() ? 1 : 0;
      return (count) => count >= receivers && count >= self + hb.livePeers().length;
    });
  };
  sub.on('ready', () => {
    sub.subscribe(...names, ping, ackChannel).then(() => {
      hb.subscribed(true);
      c.up();
    }, (err: unknown) => c.down(err));
  });
  sub.on('error', (err: unknown) => c.down(err));
  sub.on('close', () => {
    hb.subscribed(false);
    c.down();
  });
  pub.on('error', () => undefined); // surfaced by publish
  return {
    kind: 'redis',
    version: (t) => c.version(t),
    publish: (t) => c.publish(t, () => publishAcknowledged(t)),
    healthy: () => c.healthy,
    async close() {
      hb.stop();
      sub.disconnect();
      pub.disconnect();
    },
  };
}

/**
 * PostgreSQL LISTEN/NOTIFY on the main database: one listening connection (reconnected after
 * `pollMs` when it drops), and NOTIFY through a small pool. PostgreSQL signals the listening sessions
 * when the NOTIFY commits, but each delivers to its client asynchronously: the publisher's statement may
 * return while a receiver has not read the notification yet. So, as on Redis, every receiver moves its
 * version and then acknowledges (`gatehouse_invalidate_ack`, `<publisher id>:<seq>|<receiver id>`), and
 * `publish` resolves once this process read its own notification and every receiver it knows has
 * acknowledged (or after {@link PUBLISH_WAIT_POLLS} intervals, by when a receiver that has not read the
 * notification no longer answers from memory: {@link TRUST_POLLS}). PostgreSQL does not say how many
 * sessions listen; a process knows its peers from their heartbeats (each pings on the channel every
 * `pollMs`, and at once when it subscribes), and waits for those heard within the last
 * {@link PEER_TTL_POLLS} intervals, judged once its own notification came back (by then it has read
 * every ping committed before it, so a peer it has not heard from for that long sent its last ping
 * longer ago than its lease).
 * @param connection `pg` client config (connection string or parts) of the main database
 */
export function createPostgresInvalidation(connection: pg.ClientConfig, o: InvalidationOptions = {}): InvalidationChannel {
  const c = new Counters(o, 'postgres');
  const pollMs = Math.max(1, o.pollMs ?? INVALIDATION_POLL_MS);
  const now = o.nowMs ?? (() => performance.now());
  const channelOf = (t: InvalidationTopic | 'ping' | 'ack'): string => `gatehouse_invalidate_${t}`;
  const pool = new pg.Pool({ ...connection, max: 2 });
  pool.on('error', () => undefined);
  const me = randomBytes(8).toString('hex');
  const notify = (channel: string, payload: string): Promise<unknown> => pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  const hb = startHeartbeat(c, o, (payload) => notify(channelOf('ping'), payload), me);
  const acks = acknowledgements(PUBLISH_WAIT_POLLS * pollMs, now);
  let seq = 0;
  let closed = false;
  let listener: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  const onNotification = (channel: string, payload: string): void => {
    if (channel === channelOf('ping')) return hb.heard(payload);
    if (channel === channelOf('ack')) {
      const bar = payload.lastIndexOf('|');
      return acks.ack(payload.slice(0, bar), payload.slice(bar + 1));
    }
    const t = TOPICS.find((x) => channelOf(x) === channel);
    if (!t) return;
    c.bump(t);
    const from = payload.slice(0, payload.indexOf(':'));
    if (from === me) acks.ack(payload, me);
    else if (from !== '') notify(channelOf('ack'), `${payload}|${me}`).catch(() => undefined);
  };
  /**
   * NOTIFY, then wait until this process read its own notification and every peer heard recently has
   * acknowledged, at most {@link PUBLISH_WAIT_POLLS} intervals. While this process's listening connection
   * is down (at start, or lost) it hears no acknowledgement: it waits the bound when it knows a live peer,
   * and not at all when it knows none.
   */
  const publishAcknowledged = (t: InvalidationTopic): Promise<void> => {
    const id = `${me}:${++seq}`;
    return acks.publish(id, async () => {
      const self = hb.listening();
      await notify(channelOf(t), id);
      return (_count, from) => (!self || from.has(me)) && hb.livePeers().every((peer) => from.has(peer));
    });
  };
  const listen = async (): Promise<void> => {
    retry = null;
    if (closed) return;
    const client = new pg.Client(connection);
    listener = client;
    const lost = (err?: unknown): void => {
      if (listener !== client) return;
      listener = null;
      hb.subscribed(false);
      c.down(err);
      client.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void listen(), pollMs);
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (n) => onNotification(n.channel, n.payload ?? ''));
    try {
      await client.connect();
      for (const t of [...TOPICS, 'ping' as const, 'ack' as const]) await client.query(`LISTEN ${channelOf(t)}`);
      if (listener === client) {
        hb.subscribed(true);
        c.up();
      }
    } catch (err) {
      lost(err);
    }
  };
  void listen();
  return {
    kind: 'postgres',
    version: (t) => c.version(t),
    publish: (t) => c.publish(t, () => publishAcknowledged(t)),
    healthy: () => c.healthy,
    async close() {
      closed = true;
      hb.stop();
      if (retry) clearTimeout(retry);
      const l = listener;
      listener = null;
      await l?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * Combines several "changes when someone else wrote" functions (a channel topic, SQLite's
 * `PRAGMA data_version`) into one: its value changes whenever any of them does.
 */
export function combineVersions(...fns: Array<(() => number) | null | undefined>): () => number {
  const list = fns.filter((f): f is () => number => typeof f === 'function');
  if (list.length === 1) return list[0]!;
  const last = list.map((f) => f());
  let n = 0;
  return () => {
    for (let i = 0; i < list.length; i++) {
      const v = list[i]!();
      if (v !== last[i]) {
        last[i] = v;
        n++;
      }
    }
    return n;
  };
}
