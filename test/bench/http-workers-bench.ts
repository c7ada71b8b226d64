/**
 * @module bench/http-workers-bench
 * Issue 22 §4: does spreading HTTP work over the machine's cores pay here? The ceiling of that gain: a
 * bare node:http server (test/bench/bare-server.ts) answering the validate answer's JSON with one process,
 * then with 2 node:cluster workers sharing its port, loaded by the same autocannon in this process on the
 * same machine, in alternating rounds (`--rounds` 4 of `--duration` 5 s, `--connections` 50). Gatehouse
 * spends more CPU per request than the bare server, so its own gain from workers is at most this one.
 * Not a test: the figures depend on the machine and its load (printed).
 */
import os from 'node:os';
import { measureWithCpu, startBare, type LoadTarget } from './load.ts';

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.slice(name.length + 3)) : fallback;
};

async function once(workers: number, durationS: number, connections: number): Promise<number> {
  const { url, child } = await startBare('{"is_valid":true,"claims":{"sub":"x","roles":["user"],"exp":1}}', workers);
  try {
    const target: LoadTarget = { name: `bare node:http, ${workers} worker(s)`, url, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token_type":"access_token","token":"x"}', connections };
    const m = await measureWithCpu(target, { durationS, warmupS: 1 }, []);
    return m.figures.rps;
  } finally {
    child.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  const rounds = arg('rounds', 4);
  const durationS = arg('duration', 5);
  const connections = arg('connections', 50);
  console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} (shared machine: the figures move with it)`);
  const ratios: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const one = await once(1, durationS, connections);
    const two = await once(2, durationS, connections);
    ratios.push(two / one);
    console.log(`round ${r + 1}: 1 process ${one.toFixed(0)} req/s, 2 cluster workers ${two.toFixed(0)} req/s, ratio ${(two / one).toFixed(2)}`);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(`median ratio 2 workers / 1 process: ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} (load average now ${os.loadavg().map((x) => x.toFixed(1)).join(' ')})`);
}

await main();
