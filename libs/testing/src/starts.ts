/**
 * @module @gatehouse/testing/starts
 * The deployments {@link startDeployment} is still starting, so that a start its test file gave up on can be
 * stopped. Under Jest every test file has its own module registry, so this is one file's starts. It imports
 * nothing at run time: Jest loads it before every test file (jest-abandoned-starts.ts).
 */
import type { GatehouseProcess } from './process.ts';

/** the processes of each start in progress (the start's own array, filled as it spawns) */
const inProgress = new Set<readonly GatehouseProcess[]>();
let abandoned: string | null = null;

/**
 * Registers a start whose processes will be pushed to `processes`; call {@link endStart} when it returns or throws.
 * @throws Error after {@link stopAbandonedStarts}
 */
export function beginStart(processes: readonly GatehouseProcess[]): void {
  assertStartsAllowed();
  inProgress.add(processes);
}

/** The start of `processes` has returned (its deployment now stops through its own `stop()`) or failed. */
export function endStart(processes: readonly GatehouseProcess[]): void {
  inProgress.delete(processes);
}

/**
 * @throws Error naming why, once {@link stopAbandonedStarts} has run: a start that outlived its test file
 *   must not spawn more processes
 */
export function assertStartsAllowed(): void {
  if (abandoned !== null) throw new Error(`no more gatehouse processes are started: ${abandoned}`);
}

/** How many processes the starts in progress have spawned and are still running. */
export function pendingStartProcesses(): number {
  return [...inProgress].flat().filter((p) => p.alive()).length;
}

/**
 * Stops the processes of every start still in progress (SIGTERM, SIGKILL after `graceMs`), and makes every
 * later start, or later step of one, throw. Jest runs it after each test file: a `beforeAll` that timed out
 * while a deployment was starting leaves the start running after the file has failed, and its processes
 * would otherwise hold their ports and the machine's cores through every later file of the same worker.
 * The interrupted start then fails and removes what it made (database, stream) itself.
 * @param why the message later starts throw with
 * @returns how many processes were still running
 */
export async function stopAbandonedStarts(why: string, graceMs = 2000): Promise<number> {
  abandoned = why;
  const left = [...inProgress].flat().filter((p) => p.alive());
  await Promise.all(left.map((p) => p.stop(graceMs)));
  return left.length;
}
