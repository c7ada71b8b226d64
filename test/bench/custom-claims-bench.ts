/**
 * Cost of `--custom-access-token-script` per token issuance (issue 18 item 6): the QuickJS/WASM
 * sandbox on its worker thread, sequential calls after a warm-up, as a login issues them.
 * Run: `npx node test/bench/custom-claims-bench.ts [calls]` (default 2000). Prints µs per call
 * (mean, p50, p99) and calls per second.
 */
import { createLogger } from '@gatehouse/observability';
import { compileCustomClaims } from '../../services/authn/src/domain/custom-claims.ts';

const calls = Number(process.argv[2] ?? 2000);
const run = compileCustomClaims('function(user, tokenPayload) { return { tenant: "t-" + user.id, plan: user.email.endsWith("@example.com") ? "pro" : "free", tt: tokenPayload.token_type }; }', createLogger('warn'))!;
const user = { id: 'u-123', email: 'ada@example.com', roles: ['user'], given_name: 'Ada', family_name: 'Lovelace' };
const payload = { sub: 'u-123', token_type: 'access_token', scope: ['openid', 'email', 'profile'], roles: ['user'] };
for (let i = 0; i < 200; i++) await run(user, payload);
const samples: number[] = [];
const start = performance.now();
for (let i = 0; i < calls; i++) {
  const t = performance.now();
  await run(user, payload);
  samples.push((performance.now() - t) * 1000);
}
const total = performance.now() - start;
samples.sort((a, b) => a - b);
const us = (v: number): string => `${v.toFixed(0)} µs`;
console.log(JSON.stringify({
  calls, mean: us(samples.reduce((a, b) => a + b, 0) / calls), p50: us(samples[Math.floor(calls * 0.5)]!), p99: us(samples[Math.floor(calls * 0.99)]!),
  per_second: Math.round(calls / (total / 1000)),
}));
await run.close();
