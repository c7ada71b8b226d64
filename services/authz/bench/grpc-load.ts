/**
 * @module authz/bench/grpc-load
 * One gRPC load-generator process for `gateway-bench.ts`: a grpc-js client keeping `inFlight`
 * CheckPermissions calls in flight from `startAt` (epoch ms) until `durationS` seconds after it. It reads
 * its job as JSON on stdin, `{ address, token, bodies, inFlight, startAt, durationS }` (bodies: JSON
 * request texts, cycled), and prints one JSON line `{ latencies, errors, cpuS }`: each successful call's
 * latency in ms, the failed calls, and the CPU seconds this process spent over the measured window. The
 * bench runs several of these because a grpc-js client spends more CPU per call than the server it loads.
 * Not run on its own.
 */
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';

interface Job { address: string; token: string; bodies: string[]; inFlight: number; startAt: number; durationS: number }

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

async function main(): Promise<void> {
  const job = JSON.parse(await readStdin()) as Job;
  const client = createGrpcClient(serviceDescriptor('authz'), { address: job.address });
  const reqs = job.bodies.map((b) => JSON.parse(b) as Record<string, unknown>);
  const ctx = () => createCallContext({ headers: { authorization: `Bearer ${job.token}` } });
  await client.call('CheckPermissions', reqs[0], ctx()); // connect before the window opens
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, job.startAt - Date.now())));
  const cpuBefore = process.cpuUsage();
  // the window is the bench's, on the wall clock: a process that started late stops with the others
  const endAt = job.startAt + job.durationS * 1000;
  const latencies: number[] = [];
  let errors = 0;
  const worker = async (w: number): Promise<void> => {
    for (let i = w; Date.now() < endAt; i += job.inFlight) {
      const start = performance.now();
      try {
        await client.call('CheckPermissions', reqs[i % reqs.length], ctx());
        latencies.push(Math.round((performance.now() - start) * 1000) / 1000);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: job.inFlight }, (_, w) => worker(w)));
  const cpu = process.cpuUsage(cpuBefore);
  client.close();
  // stdout to a pipe is asynchronous: exit only once the whole result has been handed over
  await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify({ latencies, errors, cpuS: (cpu.user + cpu.system) / 1e6 })}\n`, () => resolve()));
}

main().then(() => process.exit(0), (err: unknown) => {
  console.error(err);
  process.exit(1);
});
