import { describe, expect, it } from '@jest/globals';
import { createDevOutbox, DEV_OUTBOX_CAPACITY } from './dev-outbox.ts';

describe('the development outbox (issue 33 §4)', () => {
  it('lists the kept messages newest first, with an id and the time they were kept', () => {
    const outbox = createDevOutbox(DEV_OUTBOX_CAPACITY, () => 1_700_000_000);
    outbox.add({ channel: 'email', to: 'ada@example.com', subject: 'Verify your email', text: 'https://x/verify_email?token=t', html: '<a>' });
    outbox.add({ channel: 'sms', to: '+15551234567', subject: 'sms', text: 'Your verification code is: 123456', html: '' });
    const listed = outbox.list();
    expect(listed.map((m) => m.to)).toEqual(['+15551234567', 'ada@example.com']);
    expect(listed[0]).toMatchObject({ channel: 'sms', text: 'Your verification code is: 123456', createdAt: 1_700_000_000 });
    expect(listed[0]?.id).not.toEqual(listed[1]?.id);
  });

  it('keeps only the last 100, dropping the oldest', () => {
    const outbox = createDevOutbox();
    for (let i = 0; i < 105; i++) outbox.add({ channel: 'email', to: `u${i}@example.com`, subject: 's', text: 't', html: '' });
    const listed = outbox.list();
    expect(listed).toHaveLength(100);
    expect(listed[0]?.to).toBe('u104@example.com');
    expect(listed[99]?.to).toBe('u5@example.com');
  });
});
