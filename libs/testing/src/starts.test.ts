/**
 * @module @gatehouse/testing/starts.test
 * A deployment start its test file gave up on (a `beforeAll` that timed out mid-start) is stopped at the
 * file's end instead of living on through the worker's later files.
 */
import { describe, expect, it } from '@jest/globals';
import { pendingStartProcesses, startDeployment, stopAbandonedStarts } from './index.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('stopAbandonedStarts', () => {
  it('stops the processes of a start still in progress, fails that start, and refuses later ones', async () => {
    const start = startDeployment('all');
    const failed = start.then(() => null, (err: Error) => err);
    // the process is spawned right away; it needs well over a second to answer /healthz
    for (let i = 0; i < 500 && pendingStartProcesses() === 0; i++) await sleep(20);
    expect(pendingStartProcesses()).toBe(1);
    expect(await stopAbandonedStarts('the test gave up on it')).toBe(1);
    const err = await failed;
    expect(err).toBeInstanceOf(Error);
    expect(pendingStartProcesses()).toBe(0);
    await expect(startDeployment('all')).rejects.toThrow('no more gatehouse processes are started: the test gave up on it');
  });
});
