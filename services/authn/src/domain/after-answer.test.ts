/**
 * Work after the answer (issue 30 §6) and the wait for it before a process closes its database
 * (issue 37 §4): the account of a sign-up with email verification on is written after the answer, so
 * a stopping authn must finish that work first.
 */
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger } from '@gatehouse/observability';
import { createAfterAnswerQueue } from './deps.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function capture(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb(); } });
  return { logger: createLogger('info', sink), lines };
}

describe('work after the answer', () => {
  it('answers before the work runs, then runs it', async () => {
    const q = createAfterAnswerQueue(capture().logger);
    const done: string[] = [];
    await q.afterAnswer(async () => { done.push('written'); });
    expect(done).toEqual([]);
    await sleep(200);
    expect(done).toEqual(['written']);
  });

  it('drain waits for work not started yet, work running, and work that work scheduled', async () => {
    const q = createAfterAnswerQueue(capture().logger);
    const done: string[] = [];
    await q.afterAnswer(async () => {
      await sleep(100);
      done.push('account');
      await q.afterAnswer(async () => { done.push('follow-up'); });
    });
    await q.drain();
    expect(done).toEqual(['account', 'follow-up']);
  });

  it('logs a failed piece of work, and drain still resolves', async () => {
    const { logger, lines } = capture();
    const q = createAfterAnswerQueue(logger);
    await q.afterAnswer(async () => { throw new Error('database went away'); });
    await q.drain();
    expect(lines.join('')).toContain('work after the answer failed');
    expect(lines.join('')).toContain('database went away');
  });
});
