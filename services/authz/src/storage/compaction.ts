/**
 * @module authz/storage/compaction
 * Compaction of the change log of a shared SQL store (issue 32 §3: "authz's change log compacted once no
 * replica needs it"). Every replica reports, on a period, the revision its snapshot has applied
 * (`fga_replicas`), then deletes the change-log entries no live replica needs any more
 * ({@link ChangeLogCompactor.compactChanges}): the entries at or below the lowest revision a replica reported
 * within {@link REPLICA_LIVE_MS}, keeping at least the last {@link CHANGE_RETENTION} revisions (the safety
 * floor, for a replica that is starting or has not reported yet, and for ReadChanges readers) and at most
 * the last {@link CHANGE_LOG_CEILING}. Every replica runs it (no leader): two compactions at once delete the
 * same rows. A replica that stops forgets its report; one that died stops holding anything back once its
 * report is older than {@link REPLICA_LIVE_MS}, and if it comes back further behind than what is kept, it
 * finds a gap in the log and reloads its snapshot.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '@gatehouse/observability';
import { CHANGE_LOG_CEILING, CHANGE_RETENTION, type ChangeLogCompactor, type Compaction } from './ports.ts';

/** How often a replica reports its revision and compacts, in ms. */
export const REPLICA_REPORT_MS = 10_000;
/** A replica whose last report is older than this (ms) holds nothing back (six missed reports). */
export const REPLICA_LIVE_MS = 60_000;
/** Reports older than this (ms) are deleted by compaction. */
export const REPLICA_FORGET_MS = 24 * 3600_000;

export interface ChangeLogCompaction {
  /** this replica's id in `fga_replicas` */
  readonly replicaId: string;
  /** one report and compaction now (after the one in progress); null when the snapshot has not loaded yet */
  run(): Promise<Compaction | null>;
  /** stops the period, waits for the pass in progress and forgets this replica's report */
  stop(): Promise<void>;
}

/**
 * Starts this replica's reports and compactions.
 * @param opts.applied the revision this replica's snapshot has applied, or null while it has none (then
 *   it reports nothing: the floor covers a replica that is loading)
 * @param opts.floor / opts.ceiling revisions kept at least / at most (defaults: the constants above; tests lower them)
 */
export function startChangeLogCompaction(opts: {
  store: ChangeLogCompactor; applied: () => number | null; logger: Logger;
  intervalMs?: number; liveMs?: number; floor?: number; ceiling?: number; now?: () => number;
}): ChangeLogCompaction {
  const replicaId = randomUUID();
  const now = opts.now ?? Date.now;
  const liveMs = opts.liveMs ?? REPLICA_LIVE_MS;
  const log = opts.logger.child({ component: 'change-log-compaction', replica: replicaId });
  let failing = false;
  let chain: Promise<Compaction | null> = Promise.resolve(null);
  const pass = async (): Promise<Compaction | null> => {
    const revision = opts.applied();
    if (revision === null) return null;
    try {
      const t = now();
      await opts.store.reportReplica(replicaId, revision, t);
      const done = await opts.store.compactChanges({
        liveSince: t - liveMs, forgetBefore: t - REPLICA_FORGET_MS, floor: opts.floor ?? CHANGE_RETENTION, ceiling: opts.ceiling ?? CHANGE_LOG_CEILING,
      });
      if (done.deleted > 0) log.debug({ horizon: done.horizon, deleted: done.deleted }, 'change log compacted');
      failing = false;
      return done;
    } catch (err) {
      if (!failing) log.warn({ err }, 'change log report or compaction failed; retrying next period');
      failing = true;
      return null;
    }
  };
  const run = (): Promise<Compaction | null> => (chain = chain.then(pass, pass));
  const timer = setInterval(() => void run(), opts.intervalMs ?? REPLICA_REPORT_MS);
  timer.unref?.();
  return {
    replicaId,
    run,
    async stop() {
      clearInterval(timer);
      await chain.catch(() => null);
      await opts.store.forgetReplica(replicaId).catch((err: unknown) => log.warn({ err }, 'replica report not forgotten'));
    },
  };
}
