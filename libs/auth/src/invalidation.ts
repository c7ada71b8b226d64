/**
 * @module @gatehouse/auth/invalidation
 * The notification channel that keeps in-memory answers correct across processes (issue 22 §1): the
 * credential caches (sessions, user activity: behaviour.md §2.1, §2.2) and authz's store revision
 * (§7.1 "every replica uses the new version from its next request after the write returns").
 *
 * A channel is a set of counters, one per topic. A writer calls `publish(topic)` after its write commits
 * and before its response is sent; every process on the channel (the writer too) sees that topic's
 * `version()` change, and a cache compares versions to know whether its answers still hold. While
 * notifications cannot be trusted (connection down, not yet subscribed), `version()` changes at least
 * every `pollMs`, so a cache re-reads the database at that rate: bounded staleness instead of silence.
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
 * How long, in polling intervals, a publish waits for its receivers' acknowledgements: the period in
 * which a receiver pings plus the grace its own heartbeat allows. A live receiver that has not moved its
 * version by then has a ping out for longer than its grace, so its own next read finds its channel late
 * and polls ({@link Counters.version}); waiting only one interval let a receiver slowed by a loaded
 * machine answer a request with the state from before the write.
 */
export const PUBLISH_WAIT_POLLS = 1 + HEARTBEAT_GRACE_PERIODS;

/**
 * A PostgreSQL peer whose heartbeat was heard within this many polling intervals is waited for by a
 * publish (it pings every interval; a stopped one drops out after this many). Longer than the publish
 * wait, so a peer whose pings are delayed as long as its acknowledgements still counts.
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
   * Set by the heartbeat: the monotonic time its outstanding ping went out, or null when none is out.
   * A read while a ping has been out longer than the grace marks the channel down at once, not at the
   * heartbeat timer's next turn: a receiver whose notifications lag must not answer from memory.
   */
  pingOutSince: number | null = null;
  version(t: InvalidationTopic): number {
    if (this.#up && this.pingOutSince !== null && this.#now() - this.pingOutSince > HEARTBEAT_GRACE_PERIODS * this.#pollMs) {
      this.down(new Error(`a heartbeat did not come back within ${HEARTBEAT_GRACE_PERIODS} polling intervals`));
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
  /** a ping came back on the transport */
  echo(payload: string): void;
  stop(): void;
}

/**
 * Proves that the channel delivers, not only that it is connected: every `pollMs` a ping carrying this
 * process's token goes out on the transport; a ping not back after `HEARTBEAT_GRACE_PERIODS` periods
 * marks the channel down (a stalled connection, a pooler in transaction mode that swallows
 * notifications), so caches poll; its echo marks it up again (which drops whatever may have been missed).
 * The lateness is judged in the check phase after the timer's turn (`setImmediate`), so an echo that
 * arrived during a stall is read first.
 */
function startHeartbeat(c: Counters, o: InvalidationOptions, send: (payload: string) => Promise<unknown>, me = randomBytes(8).toString('hex')): Heartbeat {
  let seq = 0;
  let awaiting: string | null = null;
  let late = 0;
  let on = false;
  const now = o.nowMs ?? (() => performance.now());
  const ping = (): void => {
    awaiting = `${me}:${++seq}`;
    late = 0;
    c.pingOutSince = now();
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
  }, Math.max(1, o.pollMs ?? INVALIDATION_POLL_MS));
  timer.unref();
  return {
    subscribed(v) {
      on = v;
      awaiting = null;
      c.pingOutSince = null;
      // the first ping at once: peers that count their receivers by heartbeat (PostgreSQL) know this one
      if (v) ping();
    },
    echo(payload) {
      if (payload !== awaiting) return;
      awaiting = null;
      c.pingOutSince = null;
      if (!c.healthy) c.up();
    },
    stop: () => clearInterval(timer),
  };
}

/** Decides whether a publish has been acknowledged enough: by the count of acknowledgements and who sent them. */
type Enough = (count: number, from: ReadonlySet<string>) => boolean;

/**
 * This process's publishes waiting for their receivers' acknowledgements (Redis and PostgreSQL alike).
 * `publish(id, send)` runs `send`, which returns when the acknowledgements suffice (it may need the
 * transport's answer, e.g. Redis's receiver count), and resolves once they do or after `waitMs`;
 * `ack(id, from)` records one acknowledgement of publish `id`.
 */
function acknowledgements(waitMs: number): { publish(id: string, send: () => Promise<Enough>): Promise<void>; ack(id: string, from?: string): void } {
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
        if (p.enough(p.count, p.from)) return;
        await Promise.race([acked, new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); })]);
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
 * moves its version, then acknowledges on the publisher's ack channel. `publish` resolves once as many
 * acknowledgements came back as PUBLISH reported receivers (or after {@link PUBLISH_WAIT_POLLS} intervals, the bound a
 * stalled receiver falls back to): Redis answering the publisher does not mean a receiver has read the
 * message (it may still sit in a socket buffer while that receiver serves a request that was sent after
 * the writer's response), so the writer's response waits for the receivers, not for Redis.
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
  const acks = acknowledgements(PUBLISH_WAIT_POLLS * Math.max(1, o.pollMs ?? INVALIDATION_POLL_MS));
  let seq = 0;
  const hb = startHeartbeat(c, o, (payload) => pub.publish(ping, payload));
  sub.on('message', (channel: string, message: string) => {
    if (channel === ping) return hb.echo(message);
    if (channel === ackChannel) return acks.ack(message);
    const t = channel.slice(prefix.length) as InvalidationTopic;
    if (!TOPICS.includes(t)) return;
    c.bump(t);
    const from = message.slice(0, message.indexOf(':'));
    if (from !== '') pub.publish(`${prefix}ack:${from}`, message).catch(() => undefined);
  });
  /** PUBLISH, then wait until every receiver Redis counted has acknowledged, at most {@link PUBLISH_WAIT_POLLS} intervals. */
  const publishAcknowledged = (t: InvalidationTopic): Promise<void> => {
    const id = `${me}:${++seq}`;
    return acks.publish(id, async () => {
      const receivers = Number(await pub.publish(`${prefix}${t}`, id));
      return (count) => count >= receivers;
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
 * `publish` resolves once every receiver it knows has (or after {@link PUBLISH_WAIT_POLLS} intervals, the bound a stalled
 * receiver falls back to). PostgreSQL does not say how many sessions listen; a process knows its peers
 * from their heartbeats (each pings on the channel every `pollMs`, and at once when it subscribes), and
 * waits for those heard within the last {@link PEER_TTL_POLLS} intervals.
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
  /** other processes on the channel: id → when their last ping arrived */
  const peers = new Map<string, number>();
  const acks = acknowledgements(PUBLISH_WAIT_POLLS * pollMs);
  let seq = 0;
  let closed = false;
  let listener: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  const onNotification = (channel: string, payload: string): void => {
    if (channel === channelOf('ping')) {
      const from = payload.slice(0, payload.indexOf(':'));
      if (from !== me && from !== '') peers.set(from, now());
      return hb.echo(payload);
    }
    if (channel === channelOf('ack')) {
      const bar = payload.lastIndexOf('|');
      return acks.ack(payload.slice(0, bar), payload.slice(bar + 1));
    }
    const t = TOPICS.find((x) => channelOf(x) === channel);
    if (!t) return;
    c.bump(t);
    const from = payload.slice(0, payload.indexOf(':'));
    if (from !== me && from !== '') notify(channelOf('ack'), `${payload}|${me}`).catch(() => undefined);
  };
  /** NOTIFY, then wait until every peer heard recently has acknowledged, at most {@link PUBLISH_WAIT_POLLS} intervals. */
  const publishAcknowledged = (t: InvalidationTopic): Promise<void> => {
    const since = now() - PEER_TTL_POLLS * pollMs;
    const expected = [...peers].filter(([, at]) => at >= since).map(([peer]) => peer);
    const id = `${me}:${++seq}`;
    return acks.publish(id, async () => {
      await notify(channelOf(t), id);
      return (_count, from) => expected.every((peer) => from.has(peer));
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
