/**
 * @module bench/log-level
 * The cost of the default log level (issue 38 §4): the same load against two copies of one deployment,
 * one at `--log-level=warn` (what the other figures use) and one at `--log-level=info`, the default, where
 * the gateway writes one access-log line per request (gateway/src/http/access-log.ts). Both copies run at
 * once and are measured in interleaved rounds (the order alternates), so a machine whose speed drifts
 * moves both; the cost is the median of the rounds' ratios, in server CPU per request (which hardly moves
 * with the machine's load) and in req/s.
 */
import { loadavg } from 'node:os';
import { measureWithCpu, type LoadParams, type LoadTarget, type Measured, type Watched } from './load.ts';

/** A log level the comparison runs at. */
export type BenchLogLevel = 'warn' | 'info';

/** One copy of the deployment under test, started at a given log level. */
export interface LevelTarget {
  target: LoadTarget;
  watched: readonly Watched[];
  stop(): Promise<void>;
}

/** What {@link compareLogLevels} measured: medians of the per-round ratios info/warn. */
export interface LogLevelCost {
  /** median over rounds of (server CPU per request at info) / (at warn) − 1; 0.05 = 5% more CPU */
  cpuCost: number;
  /** median over rounds of 1 − (req/s at info) / (req/s at warn); 0.05 = 5% fewer requests */
  rpsCost: number;
  /** median server CPU per request (ms) at each level */
  cpuMs: Record<BenchLogLevel, number>;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const totalMs = (m: Measured): number => m.cpuPerRequestMs.main + m.cpuPerRequestMs.pool + m.cpuPerRequestMs.other;

/**
 * Starts one copy at each level (`start`), warms each up for `params.warmupS`, then measures
 * `rounds` rounds of `params.durationS` seconds each, warn and info in turns (warn first in even
 * rounds), printing each round and the medians with the load average. Stops both copies.
 * @param label printed before each line (e.g. `validate_jwt_token (all)`)
 * @returns the medians of the per-round ratios; the verdict (target: under 10%) is printed
 * @throws when a copy fails to start or a request errors out (autocannon counts non-2xx; they are printed)
 */
export async function compareLogLevels(label: string, start: (level: BenchLogLevel) => Promise<LevelTarget>, rounds: number, params: LoadParams): Promise<LogLevelCost> {
  const copies: Partial<Record<BenchLogLevel, LevelTarget>> = {};
  try {
    copies.warn = await start('warn');
    copies.info = await start('info');
    const cpuRatios: number[] = [];
    const rpsRatios: number[] = [];
    const cpu: Record<BenchLogLevel, number[]> = { warn: [], info: [] };
    for (let round = 0; round < rounds; round++) {
      const order: BenchLogLevel[] = round % 2 === 0 ? ['warn', 'info'] : ['info', 'warn'];
      const got: Partial<Record<BenchLogLevel, Measured>> = {};
      for (const level of order) {
        const c = copies[level]!;
        // the warm-up only before each copy's first round: later rounds follow a measured run of the other copy
        got[level] = await measureWithCpu(c.target, { durationS: params.durationS, warmupS: round < 2 ? params.warmupS : 0 }, c.watched);
      }
      const [w, i] = [got.warn!, got.info!];
      const bad = [w, i].filter((m) => m.figures.errors > 0 || m.figures.non2xx > 0);
      if (bad.length > 0) throw new Error(`${label}: errors or non-2xx answers (${bad.map((m) => m.figures.statusCodes).join('; ')})`);
      cpu.warn.push(totalMs(w));
      cpu.info.push(totalMs(i));
      cpuRatios.push(totalMs(i) / totalMs(w) - 1);
      rpsRatios.push(1 - i.figures.rps / w.figures.rps);
      console.log(`  ${label} round ${round + 1}: warn ${w.figures.rps.toFixed(0)} req/s ${totalMs(w).toFixed(4)} ms cpu/req; info ${i.figures.rps.toFixed(0)} req/s ${totalMs(i).toFixed(4)} ms cpu/req; load average ${loadavg()[0]!.toFixed(2)}`);
    }
    const cost: LogLevelCost = { cpuCost: median(cpuRatios), rpsCost: median(rpsRatios), cpuMs: { warn: median(cpu.warn), info: median(cpu.info) } };
    const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
    const perReqUs = (cost.cpuMs.info - cost.cpuMs.warn) * 1000;
    console.log(`  ${label}: info (access log on) against warn, median of ${rounds} rounds: server cpu per request ${cost.cpuMs.warn.toFixed(4)} → ${cost.cpuMs.info.toFixed(4)} ms (${perReqUs >= 0 ? '+' : ''}${perReqUs.toFixed(1)} µs, ${cpuRatios.map(pct).join(', ')} → ${pct(cost.cpuCost)}), req/s ${rpsRatios.map(pct).join(', ')} fewer → ${pct(cost.rpsCost)}; target < 10%: ${cost.cpuCost < 0.1 ? 'met' : 'NOT met'}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    return cost;
  } finally {
    await Promise.all(Object.values(copies).map((c) => c.stop()));
  }
}
