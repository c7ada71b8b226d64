/**
 * @module test/e2e/email-faults
 * Delivery of link mails under faults (split mode; ARCHITECTURE §4: state change and job commit
 * together in the outbox, the bus carries the job at least once, the worker retries and records
 * every attempt; behaviour.md §5.5: a failure is never surfaced to the user).
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '@gatehouse/db';
import { notificationsSchema } from '@gatehouse/notifications';
import { createLogger } from '@gatehouse/observability';
import { freePort, startDeployment, startSmtpSink, type Deployment, type SmtpSink } from '@gatehouse/testing';
import { address, emailFlags, signup, sleep } from './email-support.ts';
import { killProcess, startNats, waitForPort } from '../support/nats-server.ts';

const VERIFY_SENT = 'Verification email has been sent. Please check your inbox';

/** Signs up `emails` (sequentially); every answer must be the verification message. */
async function signupAll(base: string, emails: string[]): Promise<void> {
  for (const email of emails) {
    const r = await signup(base, email);
    expect([email, r.status, r.body.message]).toEqual([email, 200, VERIFY_SENT]);
  }
}

/** Waits for one mail to each address, then a quiet period, and checks none arrived twice. */
async function expectEachOnce(sink: SmtpSink, emails: string[], timeoutMs = 60_000): Promise<void> {
  for (const email of emails) await sink.waitForMail(email, { timeoutMs });
  await sleep(3000);
  expect(emails.map((e) => [e, sink.to(e).length])).toEqual(emails.map((e) => [e, 1]));
}

describe('SMTP refuses the first two sessions with 451 (split)', () => {
  let sink: SmtpSink;
  let d: Deployment;
  let db: Database;
  beforeAll(async () => {
    sink = await startSmtpSink({ refuseFirstSessions: 2 });
    d = await startDeployment('split', { flags: emailFlags(sink) });
    db = await openDatabase({ type: d.databaseType, url: d.databaseUrl }, notificationsSchema, { logger: createLogger('silent') });
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await d?.stop();
    await sink?.close();
  });

  it('delivers the mail exactly once after the retries and records failed, failed, sent', async () => {
    const email = address('retry');
    await signupAll(d.url, [email]);
    await expectEachOnce(sink, [email]);
    expect(sink.refused()).toBe(2);
    const rows = await db.execute<{ job_id: string; attempt: number | string; outcome: string; event_name: string }>(
      'select job_id, attempt, outcome, event_name from notification_attempts where recipient = ? order by attempt', [email]);
    expect(rows.map((r) => [Number(r.attempt), r.outcome, r.event_name])).toEqual([
      [1, 'failed', 'basic_auth_signup'], [2, 'failed', 'basic_auth_signup'], [3, 'sent', 'basic_auth_signup'],
    ]);
    expect(new Set(rows.map((r) => r.job_id)).size).toBe(1);
    const jobs = await db.execute<{ status: string }>('select status from notification_jobs where job_id = ?', [rows[0]!.job_id]);
    expect(jobs).toEqual([{ status: 'sent' }]);
  }, 150_000);
});

describe('the notifications process is down while users sign up (split)', () => {
  let sink: SmtpSink;
  let d: Deployment;
  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment('split', { flags: emailFlags(sink) });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await sink?.close();
  });

  it('sends all three mails once it is back, none twice', async () => {
    await d.stopProcess('notifications');
    const emails = [address('down1'), address('down2'), address('down3')];
    await signupAll(d.url, emails);
    await sleep(1500);
    expect(sink.messages).toHaveLength(0);
    await d.startProcess('notifications');
    await expectEachOnce(sink, emails);
  }, 180_000);
});

describe('NATS is unreachable for a while during sign-ups (split, own nats-server)', () => {
  let sink: SmtpSink;
  let d: Deployment;
  let nats: ChildProcess | undefined;
  let port: number;
  let storeDir: string;
  beforeAll(async () => {
    sink = await startSmtpSink();
    port = await freePort();
    storeDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nats-'));
    nats = startNats(port, storeDir);
    await waitForPort(port);
    d = await startDeployment('split', { flags: emailFlags(sink), natsUrl: `nats://127.0.0.1:${port}` });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await killProcess(nats);
    await sink?.close();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('keeps the jobs in the outbox while NATS is down and delivers each once after it returns', async () => {
    const before = address('before');
    await signupAll(d.url, [before]);
    await sink.waitForMail(before, { timeoutMs: 60_000 });
    await killProcess(nats);
    const during = [address('nats1'), address('nats2'), address('nats3')];
    await signupAll(d.url, during);
    await sleep(3000);
    expect(during.flatMap((e) => sink.to(e))).toEqual([]);
    nats = startNats(port, storeDir);
    await waitForPort(port);
    await expectEachOnce(sink, [before, ...during], 60_000);
  }, 180_000);
});
