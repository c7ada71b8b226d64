/**
 * @module resend-otp.test: MfaService.ResendOtp through the in-process client: the message and the
 * re-armed `mfa` cookie (behaviour.md §2.4, §4.2 re-arm, §4.3 resend_otp, §9).
 */
import { describe, expect, it } from '@jest/globals';
import { makeMfa, T0, withCookie } from '../fixture.ts';

describe('ResendOtp (behaviour.md §4.3 resend_otp)', () => {
  it('answers OTP has been sent. Please check your inbox and re-sets the mfa cookie: the same handle for another 300 s', async () => {
    const m = makeMfa();
    const { cookie } = await m.openOverWire();
    m.advance(30);
    const ctx = withCookie(cookie);
    await expect(m.public.ResendOtp({ email: 'u-ada@example.com' }, ctx)).resolves.toEqual({ message: 'OTP has been sent. Please check your inbox' });
    expect(ctx.setCookies).toEqual([`${cookie}; Path=/; Max-Age=300; HttpOnly; Secure; SameSite=Lax`]);
    expect(m.mails()).toHaveLength(2);
  });

  it('gives the mfa cookie the whole 300 s when the clock turns a second during the write', async () => {
    let t = T0;
    const m = makeMfa({}, { clock: () => t++ });
    const { cookie } = await m.openOverWire();
    t += 40;
    const ctx = withCookie(cookie);
    await m.public.ResendOtp({}, ctx);
    expect(ctx.setCookies).toEqual([`${cookie}; Path=/; Max-Age=300; HttpOnly; Secure; SameSite=Lax`]);
  });

  it('a refusal sets no cookie: 429 with Retry-After within 30 s', async () => {
    const m = makeMfa();
    const { cookie } = await m.openOverWire();
    m.advance(10);
    const ctx = withCookie(cookie);
    await expect(m.public.ResendOtp({}, ctx)).rejects.toMatchObject({
      code: 'resource_exhausted', message: 'please wait before requesting another OTP', headers: { 'Retry-After': '20' },
    });
    expect(ctx.setCookies).toEqual([]);
  });

  it('without SMTP configured: 400 failed_precondition email service not enabled, no cookie', async () => {
    const m = makeMfa({ smtpHost: undefined });
    const ctx = withCookie(`mfa=${await m.seedSession()}`);
    await expect(m.public.ResendOtp({}, ctx)).rejects.toMatchObject({ code: 'failed_precondition', message: 'email service not enabled' });
    expect(ctx.setCookies).toEqual([]);
  });
});
