/**
 * @module @gatehouse/db/periodic
 * One background task run on a period, one run at a time: the loop of the outbox relay and of the
 * retention sweeper.
 */

export interface Periodic<T> {
  /** runs the task now, after the run in progress; resolves with its result */
  run(): Promise<T>;
  /** stops the period and waits for the run in progress */
  stop(): Promise<void>;
  /** true once `stop` was called */
  readonly stopped: boolean;
}

/**
 * Runs `task` every `intervalMs` (the first run one period after the start; the timer does not keep
 * the process alive) and on demand; runs never overlap. `task` must not throw (a rejection is
 * swallowed by the period and `fallback` is what `stop` waits on).
 */
export function startPeriodic<T>(task: () => Promise<T>, intervalMs: number, fallback: T): Periodic<T> {
  let chain: Promise<T> = Promise.resolve(fallback);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const run = (): Promise<T> => {
    const next = chain.then(task, task);
    chain = next;
    return next;
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      void run().finally(schedule);
    }, intervalMs);
    timer.unref?.();
  };
  schedule();
  return {
    run,
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await chain.catch(() => fallback);
    },
  };
}
