/**
 * @module bench/timing-bench
 * Account enumeration by timing (issue 30 §6): for each route that takes an identifier, the median
 * answer time for a known identifier against an unknown one, their difference, and the run-to-run
 * noise of the same measurement (the difference between the medians of the first and the second
 * half of each series; the larger of the two). A route passes when |difference| ≤ 1 ms or ≤ the noise.
 * Known and unknown requests go in pairs, in a random order within each pair, each known identifier is used once per route (no
 * lockout, no resend window shared between samples), the send caps are off and the rate limit is
 * high, so only the work behind the answer differs. All-in-one on SQLite, a real SMTP sink, email
 * verification and magic links on.
 * Run: `npm run bench:timing [-- --samples=<per side, default 40>]`
 */
import { performance } from 'node:perf_hooks';
import { startDeployment, startSmtpSink } from '@gatehouse/testing';

const samples = Number(process.argv.find((a) => a.startsWith('--samples='))?.split('=')[1] ?? 40);
const PASSWORD = 'Str0ng!pass';

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const halvesNoise = (xs: readonly number[]): number => Math.abs(median(xs.slice(0, xs.length / 2)) - median(xs.slice(xs.length / 2)));

interface Route {
  name: string;
  path: string;
  body(email: string): Record<string, unknown>;
}

const ROUTES: Route[] = [
  { name: 'login (wrong password)', path: '/v1/login', body: (email) => ({ email, password: 'Wrong!passw0rd' }) },
  { name: 'forgot_password', path: '/v1/forgot_password', body: (email) => ({ email }) },
  { name: 'magic_link_login', path: '/v1/magic_link_login', body: (email) => ({ email }) },
  { name: 'resend_verify_email', path: '/v1/resend_verify_email', body: (email) => ({ email, identifier: 'basic_auth_signup' }) },
  { name: 'webauthn_login_options', path: '/v1/webauthn_login_options', body: (email) => ({ email }) },
  { name: 'signup (verification on)', path: '/v1/signup', body: (email) => ({ email, password: PASSWORD, confirm_password: PASSWORD }) },
];

async function main(): Promise<void> {
  const smtp = await startSmtpSink();
  const d = await startDeployment('all', {
    flags: [`--smtp-host=${smtp.host}`, `--smtp-port=${smtp.port}`, '--smtp-sender-email=noreply@gatehouse.test', '--skip-tls-verification',
      '--enable-email-verification', '--enable-magic-link-login', '--send-cap-per-hour=0', '--send-cap-per-day=0'],
    readyTimeoutMs: 120_000,
  });
  const call = async (path: string, body: unknown): Promise<{ ms: number; status: number }> => {
    const t0 = performance.now();
    const res = await fetch(`${d.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', origin: d.url }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    return { ms: performance.now() - t0, status: res.status };
  };
  try {
    const run = Math.random().toString(36).slice(2, 8);
    // one known account per sample and route: each identifier is asked once per route
    const known = Array.from({ length: samples }, (_, i) => `known-${run}-${i}@example.com`);
    for (const email of known) {
      const r = await call('/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
      if (r.status !== 200) throw new Error(`signup of ${email}: ${r.status}`);
    }
    // warm-up: every route once each way
    for (const route of ROUTES) {
      await call(route.path, route.body(`warm-${run}@example.com`));
      await call(route.path, route.body(known[0]!));
    }
    const rows: string[] = [];
    let pass = true;
    for (const route of ROUTES) {
      const k: number[] = [];
      const u: number[] = [];
      const statuses = new Set<string>();
      for (let i = 0; i < samples; i++) {
        // which of the pair goes first is drawn each time, so an order effect biases neither side
        const unknown = `unknown-${run}-${route.name.length}-${i}@example.com`;
        const knownFirst = Math.random() < 0.5;
        const first = await call(route.path, route.body(knownFirst ? known[i]! : unknown));
        const second = await call(route.path, route.body(knownFirst ? unknown : known[i]!));
        const [a, b] = knownFirst ? [first, second] : [second, first];
        k.push(a.ms);
        u.push(b.ms);
        statuses.add(`${a.status}/${b.status}`);
      }
      const [mk, mu] = [median(k), median(u)];
      const diff = mk - mu;
      const noise = Math.max(halvesNoise(k), halvesNoise(u));
      const ok = Math.abs(diff) <= 1 || Math.abs(diff) <= noise;
      pass &&= ok;
      rows.push(`| ${route.name} | ${mk.toFixed(2)} | ${mu.toFixed(2)} | ${diff >= 0 ? '+' : ''}${diff.toFixed(2)} | ${noise.toFixed(2)} | ${[...statuses].join(' ')} | ${ok ? 'yes' : 'NO'} |`);
    }
    process.stdout.write(`timing by identifier, ${samples} samples per side, all-in-one on SQLite (ms)\n\n`);
    process.stdout.write('| route | median known | median unknown | difference | noise | status known/unknown | within 1 ms or noise |\n|---|---|---|---|---|---|---|\n');
    process.stdout.write(`${rows.join('\n')}\n`);
    process.exitCode = pass ? 0 : 1;
  } finally {
    await d.stop();
    await smtp.close();
  }
}

await main();
