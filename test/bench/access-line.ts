/**
 * @module bench/access-line
 * `node test/bench/access-line.ts [--lines=<n>] > /dev/null`: the CPU of one gateway access-log line alone
 * (issue 38 §4), written as `gateway/src/http/access-log.ts` writes it (pre-shaped JSON) and as pino's
 * `logger.info` would (the `traceFields` mixin, the generic serializer), in one process, through the
 * logger's batched stdout (point stdout at /dev/null or a pipe). Rounds alternate, and the loop yields to
 * the event loop every 10 lines so that stdout's writes complete as in a server. Prints µs of CPU per
 * line of each (all threads, the loop itself included: `loop alone`) on stderr, with the load average.
 */
import { loadavg } from 'node:os';
import { createLogger, preshapedInfoWriter } from '@gatehouse/observability';
import { accessFieldsJson, type AccessFields } from '../../gateway/src/http/access-log.ts';

const lines = Number(/^--lines=(\d+)$/.exec(process.argv[2] ?? '')?.[1] ?? 50_000);
const logger = createLogger('info').child({ service: 'gateway' }).child({ component: 'access' }, { redact: [] });
const write = preshapedInfoWriter(logger)!;
const fields = (i: number): AccessFields => ({
  req_id: `4c3b2a19-8d7e-4f6a-9b8c-${String(i).padStart(12, '0')}`, method: 'POST', route: '/v1/validate_jwt_token',
  status: 200, duration_ms: Math.round(Math.random() * 1e6) / 1000, client_ip: '127.0.0.1',
});
const ways = {
  'pino logger.info': (i: number) => logger.info(fields(i), 'request'),
  'pre-shaped': (i: number) => write(accessFieldsJson(fields(i)), 'request'),
  // the loop and its yields alone, to subtract
  'loop alone': (i: number) => { if (fields(i).status !== 200) throw new Error('unreachable'); },
} as const;

const cpuUs = (): number => { const u = process.cpuUsage(); return u.user + u.system; };
const results: Record<string, number[]> = {};
for (let round = 0; round < 6; round++) {
  const names = Object.keys(ways) as Array<keyof typeof ways>;
  for (const name of round % 2 === 0 ? names : names.reverse()) {
    const t0 = cpuUs();
    for (let i = 0; i < lines; i++) {
      ways[name](i);
      if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    logger.flush();
    (results[name] ??= []).push((cpuUs() - t0) / lines);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [name, xs] of Object.entries(results)) {
  console.error(`${name.padEnd(18)} ${median(xs).toFixed(2)} µs CPU per line (median of ${xs.length} rounds of ${lines}; ${xs.map((x) => x.toFixed(2)).join(', ')})`);
}
console.error(`load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
