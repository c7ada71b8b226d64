/**
 * @module @gatehouse/auth/send-caps.test
 * The send claims of issue 30 §2 on the in-process log and on Redis (the database slots share the
 * claim algorithm's conformance suite): concurrent requests in the interval send one, the hourly and
 * daily caps hold per destination, and an SMS outside the allowed countries claims nothing.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRedisAdminAccessStore } from './admin-access.ts';
import { createMemoryAttemptLog, type AttemptLog } from './lockout.ts';
import { claimSend, endSendInterval, SEND_CAP_MESSAGE, SMS_COUNTRY_REFUSED, type SendCapOptions } from './send-caps.ts';

const redis = createRedisAdminAccessStore({ url: 'redis://127.0.0.1:6379', keyPrefix: `gh-test-${randomBytes(4).toString('hex')}:`, windowSeconds: 900 });
afterAll(async () => { await redis.close(); });

const CAPS: SendCapOptions = { perHour: 5, perDay: 10, allowedCountryCodes: [] };
const now = 1_900_000_000;

describe.each([['memory', createMemoryAttemptLog()], ['redis', redis.failures]] as Array<[string, AttemptLog]>)('send caps (%s)', (_name, log) => {
  const dest = (): string => `${randomUUID()}@example.com`;

  it('of 20 concurrent requests inside the interval one sends; the others are told how long to wait', async () => {
    const to = dest();
    const results = await Promise.all(Array.from({ length: 20 }, () => claimSend(log, CAPS, { channel: 'email', destination: to, purpose: 'forgot_password', intervalSeconds: 60 }, now)));
    expect(results.filter((r) => r.send)).toHaveLength(1);
    expect(results.filter((r) => !r.send).every((r) => !r.send && r.retryAfter === 60)).toBe(true);
    // another purpose has its own interval, but shares the address's caps
    expect(await claimSend(log, CAPS, { channel: 'email', destination: to, purpose: 'magic_link_login', intervalSeconds: 60 }, now)).toEqual({ send: true });
  });

  it('5 an hour and 10 a day per destination: the 6th in the hour is 429 with Retry-After, then the day cap', async () => {
    const to = `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    const send = (at: number) => claimSend(log, CAPS, { channel: 'sms', destination: to, purpose: 'code', intervalSeconds: 30 }, at);
    for (let i = 0; i < 5; i++) expect(await send(now + i * 60)).toEqual({ send: true });
    await expect(send(now + 300)).rejects.toMatchObject({ code: 'resource_exhausted', message: SEND_CAP_MESSAGE, headers: { 'Retry-After': String(3600 - 300) } });
    // the refusal gave its interval back: the next hour sends at once
    for (let i = 0; i < 5; i++) expect(await send(now + 3600 + i * 60)).toEqual({ send: true });
    await expect(send(now + 7200 + 600)).rejects.toMatchObject({ code: 'resource_exhausted', headers: { 'Retry-After': String(86_400 - 7800) } });
    // another number is untouched
    expect(await claimSend(log, CAPS, { channel: 'sms', destination: `${to}9`, purpose: 'code', intervalSeconds: 30 }, now + 7800)).toEqual({ send: true });
  });

  it('endSendInterval lets the next message go at once; the caps still count it', async () => {
    const to = dest();
    const req = { channel: 'email' as const, destination: to, purpose: 'code', intervalSeconds: 30 };
    expect(await claimSend(log, { ...CAPS, perHour: 2 }, req, now)).toEqual({ send: true });
    expect((await claimSend(log, { ...CAPS, perHour: 2 }, req, now + 1)).send).toBe(false);
    await endSendInterval(log, 'email', to, 'code');
    expect(await claimSend(log, { ...CAPS, perHour: 2 }, req, now + 2)).toEqual({ send: true });
    await endSendInterval(log, 'email', to, 'code');
    await expect(claimSend(log, { ...CAPS, perHour: 2 }, req, now + 3)).rejects.toMatchObject({ code: 'resource_exhausted' });
  });

  it('--sms-allowed-country-codes refuses other numbers before anything is claimed', async () => {
    const caps = { ...CAPS, allowedCountryCodes: ['+1', '+44'] };
    await expect(claimSend(log, caps, { channel: 'sms', destination: '+88216000000', purpose: 'code', intervalSeconds: 30 }, now))
      .rejects.toMatchObject({ code: 'failed_precondition', message: SMS_COUNTRY_REFUSED });
    expect(await claimSend(log, caps, { channel: 'sms', destination: '+447700900123', purpose: 'code', intervalSeconds: 30 }, now)).toEqual({ send: true });
    // email is not an SMS: no country rule
    expect(await claimSend(log, caps, { channel: 'email', destination: dest(), purpose: 'code', intervalSeconds: 30 }, now)).toEqual({ send: true });
  });
});
