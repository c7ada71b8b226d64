/**
 * @module bench/grpc-multiplex-bench
 * `npx node test/bench/grpc-multiplex-bench.ts`: what the gateway → service hop costs per call (issue
 * 22 §2), one unary grpc-js call per call against the same calls multiplexed on streams
 * (libs/rpc/src/multiplex.ts). A real `startGrpcServer` answering `AuthnService.Login` with a fixed
 * answer of the validate_jwt_token answer's size, and a real `createGrpcClient` with the internal
 * token, the forwarded headers and a deadline, as the gateway sends them; client and server in one
 * process, so the CPU per call is both sides of the hop. `--calls=<n>` (20,000) per round,
 * `--concurrency=<n>` (50), `--rounds=<n>` (3, alternating). Not a test: the figures move with the
 * machine and its load, printed next to them.
 */
import os from 'node:os';
import { createLogger } from '@gatehouse/observability';
import { createCallContext, createGrpcClient, serviceDescriptor, startGrpcServer, type ServiceClient } from '@gatehouse/rpc';

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};
const calls = arg('calls', 20_000);
const concurrency = arg('concurrency', 50);
const rounds = arg('rounds', 3);

const desc = serviceDescriptor('authn');
const answer = { message: 'x'.repeat(200), expires_in: 1800, user: { id: '01J0000000000000000000000', email: 'bench@example.com', roles: ['user'] } };
const server = await startGrpcServer({
  host: '127.0.0.1', port: 0, logger: createLogger('silent'), internalToken: 'bench-token',
  services: [{ desc, handlers: { Login: async () => answer } }],
});
const address = `127.0.0.1:${server.port}`;

/** `calls` calls from `concurrency` callers; req/s and CPU µs per call of this process. */
async function round(client: ServiceClient): Promise<{ rps: number; cpuUs: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < calls) {
      const ctx = createCallContext({
        headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x', origin: 'http://127.0.0.1:8080', 'user-agent': 'bench' },
        clientIp: '203.0.113.9', protocol: 'rest', deadlineMs: Date.now() + 10_000,
      });
      await client.call('Login', { email: 'bench@example.com', password: 'pw' }, ctx);
    }
  }));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { rps: (calls / ms) * 1000, cpuUs: (cpu.user + cpu.system) / calls };
}

console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`${calls} calls per round, ${concurrency} concurrent callers, client and server in this process (CPU is both sides of the hop)`);
const clients = { unary: createGrpcClient(desc, { address, internalToken: 'bench-token', multiplex: false }), multiplexed: createGrpcClient(desc, { address, internalToken: 'bench-token' }) };
for (const c of Object.values(clients)) await round(c); // warm-up
const figures: Record<string, number[]> = { unary: [], multiplexed: [] };
for (let r = 0; r < rounds; r++) {
  for (const [name, c] of Object.entries(clients)) {
    const { rps, cpuUs } = await round(c);
    figures[name]!.push(cpuUs);
    console.log(`round ${r + 1} ${name.padEnd(11)} ${rps.toFixed(0).padStart(6)} calls/s  ${cpuUs.toFixed(1).padStart(6)} µs CPU per call`);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`median CPU per call: unary ${median(figures.unary!).toFixed(1)} µs, multiplexed ${median(figures.multiplexed!).toFixed(1)} µs (${(median(figures.unary!) / median(figures.multiplexed!)).toFixed(1)}× less)`);
console.log(`load average at the end: ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (const c of Object.values(clients)) c.close();
await server.close();
