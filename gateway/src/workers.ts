/**
 * @module gateway/workers
 * `--http-workers=<n|auto>` (issue 38 §0): `gatehouse all` and `gatehouse gateway` on every core. The
 * process started becomes a small supervisor (node:cluster primary) that forks that many copies of
 * itself; every copy is the whole command (all-in-one: every service, its caches and its authz
 * snapshot), and the HTTP, public gRPC (and OpenFGA API) listeners are shared, the primary handing out
 * connections round-robin. Each copy answers validate_jwt_token and check_permissions from its own
 * caches and keeps them coherent with the others through the Redis notification channel, exactly as
 * replicas do (libs/auth README "Credential caches"): a write waits until every subscriber, each worker
 * included, has acknowledged its notification, and each worker reads its channel's version before every
 * cached answer, so the next request on any worker sees a logout, a revoke or a tuple write. That is
 * why more than one worker needs `--redis-url` (libs/config validate.ts). `/metrics` is served by the
 * primary, summing the workers (prom-client's AggregatorRegistry).
 */
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import type { Config } from '@gatehouse/config';
import { AggregatorRegistry, startMetricsServer, type Logger, type MetricsServer, type PrometheusContentType, type Registry } from '@gatehouse/observability';

/** The message a worker sends the primary once every listener of it is up. */
const READY = 'gatehouse:http-worker-ready';
/** Delay before a worker that died is forked again, ms (a crash loop costs one fork per second). */
const REFORK_DELAY_MS = 1000;

/**
 * How many HTTP workers `config` asks for: `auto` is one per core this process may use
 * (`os.availableParallelism()`) with Redis, 1 without (the workers need its notification channel).
 */
export function httpWorkerCount(config: Pick<Config, 'httpWorkers' | 'redisUrl'>): number {
  if (config.httpWorkers !== 'auto') return config.httpWorkers;
  return config.redisUrl ? os.availableParallelism() : 1;
}

/**
 * This process's worker id under `--http-workers` above 1 (node:cluster's: 1, 2, … in fork order, a
 * worker forked again after a crash gets the next one), else null (a lone process).
 */
export function httpWorkerIndex(): number | null {
  return cluster.isWorker ? (cluster.worker?.id ?? null) : null;
}

/** `logger`, with `http_worker: <n>` on every line when this process is an HTTP worker. */
export function withWorker(logger: Logger): Logger {
  const index = httpWorkerIndex();
  return index === null ? logger : logger.child({ http_worker: index });
}

/**
 * In a worker: hands this worker's metrics to the primary's `/metrics` and tells the primary that this
 * worker serves. Call once every listener is up. No-op in a lone process.
 */
export function announceWorkerReady(registry: Registry): void {
  if (httpWorkerIndex() === null) return;
  AggregatorRegistry.setRegistries([registry]);
  // constructing one is what makes prom-client answer the primary's metrics requests in this worker
  void new AggregatorRegistry<PrometheusContentType>();
  process.send?.({ type: READY });
}

/**
 * The primary of `--http-workers` above 1: forks `count` workers running the same command line (the
 * first one alone, so it runs migrations and first-start seeding before the others start), serves the
 * workers' summed `/metrics` on `--metrics-host`/`--metrics-port`, forks a worker that dies again after
 * {@link REFORK_DELAY_MS}, and on SIGTERM/SIGINT stops every worker (each drains as a lone process
 * does) and exits. Exits 1 when a worker dies before it served once (a start-up failure: its own log
 * says why).
 * @param count the workers, at least 2
 */
export async function superviseHttpWorkers(config: Pick<Config, 'metricsHost' | 'metricsPort'>, count: number, logger: Logger): Promise<void> {
  const aggregator = new AggregatorRegistry<PrometheusContentType>();
  let stopping = false;
  const fork = (index: number): Promise<Worker> => new Promise((resolve, reject) => {
    const worker = cluster.fork();
    let served = false;
    worker.on('message', (m: unknown) => {
      if ((m as { type?: unknown } | null)?.type !== READY) return;
      served = true;
      resolve(worker);
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      if (!served) {
        reject(new Error(`HTTP worker ${index} exited before it served (code ${code}, signal ${signal})`));
        return;
      }
      logger.error({ http_worker: index, code, signal }, `HTTP worker ${index} died; starting it again`);
      setTimeout(() => { if (!stopping) fork(index).catch((err: unknown) => logger.error({ err, http_worker: index }, 'HTTP worker did not start again')); }, REFORK_DELAY_MS).unref();
    });
  });
  const stopAll = (): Promise<void> => {
    stopping = true;
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    return Promise.all(alive.map((w) => new Promise<void>((done) => {
      w.once('exit', () => done());
      w.process.kill('SIGTERM');
    }))).then(() => undefined);
  };
  let metrics: MetricsServer | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, `stopping ${count} HTTP workers`);
    void stopAll().then(() => metrics?.close()).then(() => process.exit(0));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    await fork(1);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => fork(i + 2)));
  } catch (err) {
    logger.fatal({ err }, 'an HTTP worker failed to start');
    await stopAll();
    process.exit(1);
  }
  // the sum over the workers, on the one metrics listener a lone process would have
  const summed = { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() };
  metrics = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry: summed }).catch((err: unknown) => {
    logger.fatal({ err, host: config.metricsHost, port: config.metricsPort }, 'the metrics listener could not start');
    void stopAll().then(() => process.exit(1));
    return null;
  });
  logger.info({ http_workers: count }, `${count} HTTP workers serving`);
}
