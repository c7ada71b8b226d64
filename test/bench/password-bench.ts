/**
 * @module bench/password-bench
 * Password hashing at the parameters of behaviour.md §3.1 (argon2id, m=19456 KiB, t=2, p=1,
 * 32-byte hash, 16-byte salt): the `argon2` package (what @gatehouse/crypto uses) against
 * `@node-rs/argon2` (devDependency, for this comparison only). Prints hashes/s and verify p50/p99
 * for each with 1, one per core and 4 (libuv threadpool size) operations in flight, the CPU each
 * operation cost, and whether each library verifies the other's hashes. Runs the two alternately
 * (A B A B) so a machine whose load changes during the run biases neither.
 * Run: `npx node test/bench/password-bench.ts [--seconds=<s per phase, default 4>]`
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import { percentile } from './load.ts';

const PARAMS = { memoryCost: 19456, timeCost: 2, parallelism: 1, hashLength: 32 } as const;
const PASSWORD = 'Bench-Passw0rd-2026!';

interface Impl {
  name: string;
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
}

const nodeArgon2: Impl = {
  name: 'argon2 0.45 (node-gyp N-API)',
  hash: (p) => argon2.hash(p, { ...PARAMS, type: argon2.argon2id, salt: randomBytes(16) }),
  verify: (h, p) => argon2.verify(h, p),
};

/** @node-rs/argon2 if installed; null otherwise (the bench then reports argon2 alone). */
async function loadNodeRs(): Promise<Impl | null> {
  try {
    const rs = await import('@node-rs/argon2');
    // Algorithm is an ambient const enum (not usable under isolatedModules); 2 = Argon2id
    const opts = { memoryCost: PARAMS.memoryCost, timeCost: PARAMS.timeCost, parallelism: PARAMS.parallelism, outputLen: PARAMS.hashLength, algorithm: 2 as const };
    return {
      name: '@node-rs/argon2 2.2 (napi-rs, Rust)',
      hash: (p) => rs.hash(p, { ...opts, salt: randomBytes(16) }),
      verify: (h, p) => rs.verify(h, p),
    };
  } catch (err) {
    console.log(`@node-rs/argon2 unavailable: ${(err as Error).message}`);
    return null;
  }
}

interface Phase {
  ops: number;
  opsPerS: number;
  p50: number;
  p99: number;
  /** process CPU (all threads) per operation, ms */
  cpuMs: number;
}

/** Runs `op` with `inFlight` operations outstanding for `seconds`; latencies in ms. */
async function phase(op: () => Promise<unknown>, inFlight: number, seconds: number): Promise<Phase> {
  const lat: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      const s = performance.now();
      await op();
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const sorted = Float64Array.from(lat).sort();
  return { ops: lat.length, opsPerS: lat.length / wall, p50: percentile(sorted, 50), p99: percentile(sorted, 99), cpuMs: (cpu.user + cpu.system) / 1000 / lat.length };
}

const line = (impl: string, what: string, p: Phase): string =>
  `${impl.padEnd(36)} ${what.padEnd(22)} ${p.opsPerS.toFixed(1).padStart(7)} /s   p50 ${p.p50.toFixed(1).padStart(6)} ms   p99 ${p.p99.toFixed(1).padStart(6)} ms   cpu/op ${p.cpuMs.toFixed(1).padStart(5)} ms   n=${p.ops}`;

async function main(): Promise<void> {
  const arg = process.argv.slice(2).find((a) => a.startsWith('--seconds='));
  const seconds = arg ? Number(arg.slice('--seconds='.length)) : 4;
  if (!(seconds > 0)) throw new Error('--seconds must be > 0');
  const cores = os.availableParallelism();
  // 1; one per core; and the libuv threadpool size (4, its default), the most the server runs at once
  const levels = [...new Set([1, cores, 4])];
  const label = (op: string, n: number): string => `${op}, ${n} in flight`;
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}, libuv threadpool ${4} (default), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`argon2id m=${PARAMS.memoryCost} KiB t=${PARAMS.timeCost} p=${PARAMS.parallelism} len=${PARAMS.hashLength}; ${seconds} s per phase; in flight ${levels.join(', ')} (1, cores, libuv threadpool); two alternating rounds`);

  const impls = [nodeArgon2, ...[await loadNodeRs()].filter((x): x is Impl => x !== null)];
  const hashes = new Map<string, string>();
  for (const impl of impls) {
    const h = await impl.hash(PASSWORD);
    // the order of m, t, p in the PHC parameter list differs between the libraries
    const [, id, version, params] = h.split('$');
    const got = Object.fromEntries((params ?? '').split(',').map((kv) => kv.split('=')));
    if (id !== 'argon2id' || version !== 'v=19' || got.m !== String(PARAMS.memoryCost) || got.t !== String(PARAMS.timeCost) || got.p !== String(PARAMS.parallelism)) throw new Error(`${impl.name} produced ${h}`);
    console.log(`${impl.name} hash: ${h.split('$').slice(0, 4).join('$')}$…`);
    hashes.set(impl.name, h);
  }
  // interoperability: a switch must keep every stored hash verifiable
  for (const a of impls) {
    for (const b of impls) {
      const h = hashes.get(b.name)!;
      console.log(`${a.name} verifies ${b.name} hash: right password ${await a.verify(h, PASSWORD)}, wrong password ${await a.verify(h, `${PASSWORD}x`)}`);
    }
  }
  console.log('');

  const best = new Map<string, Phase[]>();
  for (let round = 1; round <= 2; round++) {
    for (const impl of impls) {
      const h = hashes.get(impl.name)!;
      const rows: [string, Phase][] = [];
      for (const [op, fn] of [['hash', () => impl.hash(PASSWORD)], ['verify', () => impl.verify(h, PASSWORD)]] as const) {
        for (const n of levels) rows.push([label(op, n), await phase(fn, n, seconds)]);
      }
      for (const [what, p] of rows) console.log(`round ${round}  ${line(impl.name, what, p)}`);
      const prev = best.get(impl.name);
      best.set(impl.name, rows.map(([, p], i) => (prev && prev[i]!.opsPerS > p.opsPerS ? prev[i]! : p)));
    }
  }

  console.log('');
  console.log('best round per phase:');
  const labels = ['hash', 'verify'].flatMap((op) => levels.map((n) => label(op, n)));
  for (const [name, rows] of best) rows.forEach((p, i) => console.log(line(name, labels[i]!, p)));
  if (impls.length === 2) {
    const [a, b] = impls.map((i) => best.get(i.name)!);
    console.log('');
    labels.forEach((label, i) => console.log(`speed-up @node-rs/argon2 vs argon2, ${label}: ${(b![i]!.opsPerS / a![i]!.opsPerS).toFixed(2)}× ops/s, ${(a![i]!.cpuMs / b![i]!.cpuMs).toFixed(2)}× less cpu/op`));
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
