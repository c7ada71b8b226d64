/**
 * @module @gatehouse/testing/jest-abandoned-starts
 * Jest setup (`setupFilesAfterEnv`): after each test file, a deployment start still in progress (a
 * `beforeAll` that timed out mid-start) is stopped ({@link stopAbandonedStarts}), with one line naming how
 * many processes it had. Registered first, this hook runs before the file's own top-level `afterAll`s; it
 * touches only starts that never returned, so the file's deployments are still stopped by the file.
 */
import { afterAll } from '@jest/globals';
import { stopAbandonedStarts } from './starts.ts';

afterAll(async () => {
  const left = await stopAbandonedStarts('the test file has ended (a start that outlived a timed-out beforeAll)');
  if (left > 0) process.stderr.write(`jest-abandoned-starts: stopped ${left} gatehouse process(es) of a start the test file gave up on\n`);
});
