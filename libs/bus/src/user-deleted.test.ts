import { describe, expect, it } from '@jest/globals';
import { createLogger } from '@gatehouse/observability';
import { newEnvelope } from './envelope.ts';
import { userDeletedHandler } from './user-deleted.ts';

const logger = createLogger('silent');

describe('the user.deleted consumer (behaviour.md §5.3 delete_user)', () => {
  it('forgets the user of the event; a failure is thrown so the bus retries it', async () => {
    const forgotten: string[] = [];
    let fail = true;
    const handler = userDeletedHandler({ durable: 'x-user-deleted', logger, forget: async (id) => { if (fail) { fail = false; throw new Error('store down'); } forgotten.push(id); } });
    const env = newEnvelope('user.deleted', 'authn', { user: { id: 'u-1' } });
    await expect(handler(env, { isLastAttempt: false })).rejects.toThrow('store down');
    await handler(env, { isLastAttempt: false });
    expect(forgotten).toEqual(['u-1']);
  });

  it('acknowledges an event without a user id instead of retrying it forever', async () => {
    const forgotten: string[] = [];
    const handler = userDeletedHandler({ durable: 'x-user-deleted', logger, forget: async (id) => { forgotten.push(id); } });
    await handler(newEnvelope('user.deleted', 'authn', { user: null }), { isLastAttempt: false });
    expect(forgotten).toEqual([]);
  });
});
