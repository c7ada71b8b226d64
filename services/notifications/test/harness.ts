/**
 * @module notifications/test/harness
 * Builds the notifications worker from real parts for integration tests: a libs/bus Bus, the
 * MikroORM store on a scratch database, the nodemailer mailer pointed at an smtp-server sink,
 * a per-test prom-client registry, and a pino logger whose lines the test can read.
 */
import { Writable } from 'node:stream';
import type { Bus } from '@gatehouse/bus';
import { createLogger, createMetricsRegistry, type Registry } from '@gatehouse/observability';
import { createSmtpMailer } from '../src/smtp/mailer.ts';
import { createNotificationsService, type NotificationsService } from '../src/service.ts';
import type { DeliveryStore } from '../src/storage/storage.ts';
import type { EmailJob } from '../src/job.ts';

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

/** A pino logger at debug level that keeps its JSON lines in `lines`. */
export function captureLogger(): { logger: ReturnType<typeof createLogger>; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  return { logger: createLogger('debug', sink), lines };
}

export interface Worker {
  readonly service: NotificationsService;
  readonly registry: Registry;
  readonly lines: LogLine[];
}

export function buildWorker(opts: {
  bus: Bus;
  store: DeliveryStore;
  smtpPort: number;
  maxAttempts?: number;
  backoffMs?: number[];
}): Worker {
  const { logger, lines } = captureLogger();
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const mailer = createSmtpMailer({
    host: '127.0.0.1', port: opts.smtpPort, senderEmail: 'no-reply@acme.test', senderName: 'Acme',
    skipTlsVerification: true, timeoutsMs: { connection: 3000, greeting: 3000, socket: 5000 },
  });
  const service = createNotificationsService({
    bus: opts.bus, store: opts.store, mailer, logger, registry,
    options: {
      organizationName: 'Acme', organizationLogo: 'https://cdn.acme.test/logo.png',
      maxAttempts: opts.maxAttempts, backoffMs: opts.backoffMs,
    },
  });
  return { service, registry, lines };
}

export const LINK = 'https://auth.acme.test/app/reset-password?token=abc&redirect_uri=x';

export function resetJob(to = 'ann@acme.test'): EmailJob {
  return {
    event_name: 'forgot_password',
    to,
    user: { id: 'u-1', email: to, given_name: 'Ann', roles: ['user'] },
    variables: { verification_url: LINK },
  };
}

/** Polls `check` every 20 ms until it returns true; throws after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `value` of one series of the deliveries counter, 0 when absent. */
export async function deliveries(registry: Registry, event: string, outcome: string): Promise<number> {
  const metric = registry.getSingleMetric('gatehouse_notification_deliveries_total');
  if (!metric) return 0;
  const data = await metric.get();
  return data.values.find((v) => v.labels['event'] === event && v.labels['outcome'] === outcome)?.value ?? 0;
}
