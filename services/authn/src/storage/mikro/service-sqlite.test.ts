import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openMail } from '../../domain/email-fixture.ts';
import { decodeJwt } from 'jose';
import { createScratchDatabase, openDatabase, type Database, type ScratchDatabase } from '@gatehouse/db';
import { createLogger } from '@gatehouse/observability';
import { PASSWORD, makeAuthn } from '../../fixture.ts';
import { authnSchema, createMikroAuthnStorage } from './index.ts';

describe('authn service on SQLite storage', () => {
  let scratch: ScratchDatabase;
  let db: Database;
  beforeAll(async () => {
    scratch = await createScratchDatabase('sqlite');
    db = await openDatabase(scratch.options, authnSchema, { logger: createLogger('silent') });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  it('signs up, logs in, rotates, updates and deactivates with events in the outbox', async () => {
    const a = makeAuthn({}, { storage: (clock) => createMikroAuthnStorage(db, { clock }) });
    const s = await a.signup('ada@example.com', { app_data: { x: 1 }, scope: ['openid', 'offline_access'] });
    await expect(a.signup('ADA@example.com')).rejects.toMatchObject({ message: 'user with given email already exists' });
    const login = await a.call('Login', { email: 'ada@example.com', password: PASSWORD });
    const rotated = await a.call('Session', {}, s.cookie);
    expect(decodeJwt(rotated.res.access_token).nonce).not.toBe(decodeJwt(s.res.access_token).nonce);
    await expect(a.call('Profile', {}, s.bearer)).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Revoke', { refresh_token: s.res.refresh_token })).rejects.toMatchObject({ code: 'not_found', message: 'token not found' });
    await a.call('UpdateProfile', { given_name: 'Augusta' }, { authorization: `Bearer ${login.res.access_token}` });
    expect((await a.call('Profile', {}, { authorization: `Bearer ${login.res.access_token}` })).res).toMatchObject({ given_name: 'Augusta', app_data: { x: 1 } });
    for (let i = 0; i < 5; i++) await expect(a.call('Login', { email: 'ada@example.com', password: 'nope' })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(a.call('Login', { email: 'ada@example.com', password: PASSWORD })).rejects.toMatchObject({ code: 'resource_exhausted' });
    await a.call('DeactivateAccount', {}, { authorization: `Bearer ${login.res.access_token}` });
    await expect(a.call('Profile', {}, { authorization: `Bearer ${rotated.res.access_token}` })).rejects.toMatchObject({ code: 'unauthenticated' });
    const outbox = await db.execute<{ name: string; source: string; data: string }>('select name, source, data from authn_outbox order by seq');
    const events = outbox.filter((e) => e.name !== 'audit.recorded').map(({ name, source }) => ({ name, source }));
    expect(events).toEqual([
      { name: 'user.created', source: 'authn' }, { name: 'user.signup', source: 'authn' },
      { name: 'user.login', source: 'authn' }, { name: 'user.deactivated', source: 'authn' },
    ]);
    // behaviour.md §5.7: each user action once, through the same outbox, never with a secret
    const audit = outbox.filter((e) => e.name === 'audit.recorded').map((e) => JSON.parse(e.data) as { action: string; actor_id?: string; metadata: string });
    expect(audit.map((r) => r.action)).toEqual([
      'user.signup', 'user.login_success', 'user.profile_updated',
      ...Array(6).fill('user.login_failed'), 'user.deactivated',
    ]);
    expect(new Set(audit.map((r) => r.actor_id))).toEqual(new Set([login.res.user.id]));
    expect(audit.every((r) => !r.metadata.includes(PASSWORD) && typeof (JSON.parse(r.metadata) as { protocol?: string }).protocol === 'string')).toBe(true);
  });

  it('writes the user, the verification request and the email.send job in one transaction', async () => {
    await db.execute('delete from authn_outbox');
    const a = makeAuthn({ enableEmailVerification: true, smtpHost: 'smtp.example.com', smtpPort: 25, smtpSenderEmail: 'noreply@example.com' },
      { storage: (clock) => createMikroAuthnStorage(db, { clock }) });
    await a.call('Signup', { email: 'grace@example.com', password: PASSWORD, confirm_password: PASSWORD });
    const rows = await db.execute<{ name: string; data: string }>('select name, data from authn_outbox order by seq');
    expect(rows.map((r) => r.name).filter((n) => n !== 'audit.recorded')).toEqual(['user.created', 'user.signup', 'email.send']);
    // issue 23: the row holds the link sealed, never in clear
    expect(rows[2]!.data).not.toContain('verify_email');
    const job = openMail(a.options, JSON.parse(rows[2]!.data));
    expect(job).toMatchObject({ event_name: 'basic_auth_signup', to: 'grace@example.com', sealed_variables: expect.stringMatching(/^v2\./) });
    const token = new URL(job.variables.verification_url).searchParams.get('token')!;
    const stored = await db.execute<{ token_hash: string }>('select token_hash from authn_verification_requests where email = ?', ['grace@example.com']);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token_hash).not.toContain(token);
    const verified = await a.call('VerifyEmail', { token });
    expect(verified.res.user.email_verified).toBe(true);
    await expect(a.call('VerifyEmail', { token })).rejects.toMatchObject({ message: 'invalid verification token' });
  });
});
