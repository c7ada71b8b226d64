/** @module job.test: the email.send job contract and its validation. */
import { describe, it, expect } from '@jest/globals';
import { emailJobEnvelope, parseEmailJob, type EmailJob } from './job.ts';
import { jobSealKey, sealJobSecret } from '@gatehouse/crypto';
import { parseSmsJob } from './sms-job.ts';

const job: EmailJob = { event_name: 'magic_link_login', to: 'ann@acme.test', user: { id: 'u1' }, variables: { verification_url: 'https://a.test/v?t=1' } };

describe('emailJobEnvelope', () => {
  it('wraps the job as an email.send envelope with a UUIDv4 id and Unix seconds', () => {
    const before = Math.floor(Date.now() / 1000);
    const e = emailJobEnvelope(job, 'authn');
    expect(e).toMatchObject({ name: 'email.send', source: 'authn', data: job });
    expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(e.occurredAt).toBeGreaterThanOrEqual(before);
    expect(e.occurredAt).toBeLessThanOrEqual(before + 1);
    expect(emailJobEnvelope(job, 'authn').id).not.toBe(e.id);
  });
});

describe('parseEmailJob', () => {
  it('accepts a valid job, trims the address and drops unknown variables', () => {
    expect(parseEmailJob({ ...job, to: ' ann@acme.test ', variables: { verification_url: 'https://a.test/v?t=1', extra: 'x', otp: null } }))
      .toEqual(job);
    expect(parseEmailJob({ event_name: 'verify_otp', to: 'a@b.test', user: {}, variables: { otp: 'K7QH2M' } }).variables).toEqual({ otp: 'K7QH2M' });
  });

  it.each([
    [null, 'email job must be an object'],
    [{ ...job, event_name: 'welcome' }, 'invalid event name welcome'],
    [{ ...job, to: 'not-an-address' }, 'invalid email address'],
    [{ ...job, to: 'a@b.test\r\nBcc: c@d.test' }, 'invalid email address'],
    [{ ...job, to: 42 }, 'invalid email address'],
    [{ ...job, user: 'u1' }, 'email job user must be an object'],
    [{ ...job, variables: [] }, 'email job variables must be an object'],
    [{ ...job, variables: { verification_url: 5 } }, 'email job verification_url must be a string'],
    [{ ...job, variables: {} }, 'email job magic_link_login requires verification_url'],
    [{ ...job, event_name: 'verify_otp', variables: { verification_url: 'x' } }, 'email job verify_otp requires otp'],
  ])('rejects %j with invalid_argument %j', (data, message) => {
    expect(() => parseEmailJob(data)).toThrow(expect.objectContaining({ code: 'invalid_argument', message }));
  });
});

describe('sealed job secrets (issue 23)', () => {
  const key = jobSealKey('k'.repeat(32), 'client-secret');
  const user = { id: 'u1', email: 'ada@example.com' };

  it('opens sealed_variables with the job key; they win over variables', () => {
    const sealed = sealJobSecret(key, 'email.send', 'ada@example.com', JSON.stringify({ otp: 'ABC123' }));
    expect(parseEmailJob({ event_name: 'verify_otp', to: 'ada@example.com', user, variables: { otp: 'ZZZZZZ' }, sealed_variables: sealed }, key))
      .toEqual({ event_name: 'verify_otp', to: 'ada@example.com', user, variables: { otp: 'ABC123' } });
  });

  it('a sealed job without a key, with another key or for another recipient can never be sent: invalid_argument (dead letter)', () => {
    const sealed = sealJobSecret(key, 'email.send', 'ada@example.com', JSON.stringify({ otp: 'ABC123' }));
    const job = { event_name: 'verify_otp', to: 'ada@example.com', user, variables: {}, sealed_variables: sealed };
    expect(() => parseEmailJob(job)).toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'email.send job is sealed and this worker has no job key' }));
    expect(() => parseEmailJob(job, jobSealKey('other', 'x'))).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
    expect(() => parseEmailJob({ ...job, to: 'eve@example.com' }, key)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });

  it('opens the sealed_otp of an sms.send job', () => {
    const sealed = sealJobSecret(key, 'sms.send', '+15550100000', 'ABC123');
    expect(parseSmsJob({ to: '+15550100000', otp: '', user_id: 'u1', sealed_otp: sealed }, key)).toEqual({ to: '+15550100000', otp: 'ABC123', user_id: 'u1' });
    expect(() => parseSmsJob({ to: '+15550100001', otp: '', user_id: 'u1', sealed_otp: sealed }, key)).toThrow(expect.objectContaining({ code: 'invalid_argument' }));
  });
});
