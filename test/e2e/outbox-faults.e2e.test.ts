/**
 * @module test/e2e/outbox-faults
 * Issue 32 "what must be shown": a burst of audited actions (admin logins, webhook creations) and
 * webhook-triggering signups, hit by faults in both modes; after recovery every action that was answered
 * has its audit row exactly once, and every answered signup's webhook is delivered at least once, with one
 * delivery per signup event (the delivery id is derived from the event id) and never more log rows for it
 * than attempts the receiver saw (no duplicate rows).
 * - all-in-one on SQLite (in-process bus): the process is killed with SIGKILL mid-burst, then restarted.
 * - split on PostgreSQL with a nats-server of the test's own: the bus is killed mid-burst, the burst goes on
 *   without it (the outboxes keep the events), then authn and admin are killed with SIGKILL, and the bus and
 *   both services come back.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CommandName } from '@gatehouse/config';
import { freePort, startDeployment, type Deployment } from '@gatehouse/testing';
import { address, post, sleep } from './email-support.ts';
import { waitForAudits } from './audit-support.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';
import { killProcess, startNats, waitForPort } from '../support/nats-server.ts';

/** What the burst got answered with 200 (the only answers that promise a committed change). */
interface Answered { logins: number; webhooks: string[]; signups: string[] }

/**
 * Four concurrent loops of admin login / add_webhook / signup until `stop()` says so. An answer other than
 * 200 given before `faulted()` is a failure (kept in `refused`); after it, refusals and lost connections are
 * the fault's doing and are not counted.
 */
function burst(d: Deployment, rx: Receiver, faulted: () => boolean) {
  const answered: Answered = { logins: 0, webhooks: [], signups: [] };
  const refused: unknown[] = [];
  let stop = false;
  const admin = { 'x-service-admin-secret': d.adminSecret };
  const loop = async (i: number): Promise<void> => {
    for (let n = 0; !stop; n += 1) {
      try {
        if (n % 3 === 0) {
          const r = await post(d.url, '/v1/admin/login', { admin_secret: d.adminSecret });
          if (r.status === 200) answered.logins += 1;
          else if (!faulted()) refused.push(r.body);
        } else if (n % 3 === 1) {
          const r = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.login', endpoint: `${rx.url}/login-${i}-${n}` }, admin);
          if (r.status === 200) answered.webhooks.push(r.body.id as string);
          else if (!faulted()) refused.push(r.body);
        } else {
          const email = address(`fault-${i}`);
          const r = await post(d.url, '/v1/signup', { email, password: 'Str0ng!pass', confirm_password: 'Str0ng!pass' });
          if (r.status === 200) answered.signups.push(email);
          else if (!faulted()) refused.push(r.body);
        }
      } catch {
        if (!faulted()) throw new Error('the connection failed before any fault');
        await sleep(100); // the process is gone: try again until told to stop
      }
    }
  };
  const loops = Array.from({ length: 4 }, (_, i) => loop(i));
  return {
    answered,
    refused,
    /** resolves once `webhooks` webhook creations and `signups` signups were answered (or after 30 s) */
    async underWay(webhooks: number, signups: number): Promise<void> {
      const busy = Date.now() + 30_000;
      while ((answered.webhooks.length < webhooks || answered.signups.length < signups) && Date.now() < busy) await sleep(50);
    },
    async end(): Promise<void> {
      stop = true;
      await Promise.all(loops);
    },
  };
}

/** The id of the `user.signup` webhook of each deployment. */
const signupWebhook = new Map<Deployment, string>();

/** Every answered action audited exactly once (logins at least as often), every answered signup's webhook delivered. */
async function expectNothingLost(d: Deployment, rx: Receiver, answered: Answered): Promise<void> {
  const count = async (): Promise<{ created: Map<string, number>; logins: number }> => {
    const rows = await waitForAudits(d, (r) => r.action === 'admin.webhook_created' || r.action === 'admin.login_success', ['admin.webhook_created']);
    const created = new Map<string, number>();
    for (const r of rows.filter((x) => x.action === 'admin.webhook_created')) created.set(r.resource_id!, (created.get(r.resource_id!) ?? 0) + 1);
    return { created, logins: rows.filter((r) => r.action === 'admin.login_success').length };
  };
  // the relays redeliver what the faults interrupted: poll until every answered action has its row (or the deadline)
  const deadline = Date.now() + 90_000;
  let seen = await count();
  while ((answered.webhooks.some((id) => !seen.created.has(id)) || seen.logins < answered.logins) && Date.now() < deadline) {
    await sleep(500);
    seen = await count();
  }
  for (const id of answered.webhooks) expect({ id, rows: seen.created.get(id) ?? 0 }).toEqual({ id, rows: 1 });
  expect([...seen.created.values()].every((n) => n === 1)).toBe(true);
  expect(seen.logins).toBeGreaterThanOrEqual(answered.logins);

  const until = Date.now() + 90_000;
  const delivered = (): string[] => answered.signups.filter((email) => rx.at('/signup').some((r) => r.raw.includes(email)));
  while (delivered().length < answered.signups.length && Date.now() < until) await sleep(500);
  expect(answered.signups.filter((e) => !delivered().includes(e))).toEqual([]);

  // the delivery log: a delivery is one event to one webhook (its id derived from the event id), so there is
  // exactly one per answered signup; its rows that got an HTTP answer are never more than the POSTs the
  // receiver got for it (a redelivered attempt report writes no second row; an attempt whose report died
  // with the process has none, and its redelivery is a new attempt with its own row; an attempt made while
  // admin was down has a row with no HTTP status and no POST), and row ids are unique
  type LogRow = { id: string; delivery_id: string; http_status: number; request: string };
  const logs = async (): Promise<LogRow[]> => {
    const all: LogRow[] = [];
    for (let page = 1; ; page += 1) {
      const r = await post(d.url, '/v1/admin/webhook_logs', { webhook_id: signupWebhook.get(d), pagination: { page, limit: 1000 } }, { 'x-service-admin-secret': d.adminSecret });
      expect(r.status).toBe(200);
      const rows = r.body.webhook_logs as LogRow[];
      all.push(...rows);
      if (rows.length < 1000) return all;
    }
  };
  const logged = (rows: LogRow[]): string[] => answered.signups.filter((email) => rows.some((r) => r.http_status === 200 && r.request.includes(email)));
  let rows = await logs();
  while (logged(rows).length < answered.signups.length && Date.now() < until) {
    await sleep(500);
    rows = await logs();
  }
  expect(answered.signups.filter((e) => !logged(rows).includes(e))).toEqual([]);
  expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
  const signupRows = rows.filter((x) => answered.signups.some((e) => x.request.includes(e)));
  expect(new Set(signupRows.map((r) => r.delivery_id)).size).toBe(new Set(answered.signups).size);
  const answeredRows = new Map<string, number>();
  for (const r of signupRows.filter((x) => x.http_status > 0)) answeredRows.set(r.delivery_id, (answeredRows.get(r.delivery_id) ?? 0) + 1);
  const posts = (deliveryId: string): number => rx.at('/signup').filter((r) => r.raw.includes(deliveryId)).length;
  expect([...answeredRows].filter(([id, n]) => n > posts(id)).map(([id, n]) => ({ id, rows: n, posts: posts(id) }))).toEqual([]);
}

/** SIGKILLs the live process of `command` and waits for it to exit. */
async function sigkill(d: Deployment, command: CommandName): Promise<void> {
  const p = d.processes.find((x) => x.command === command && x.alive())!;
  p.child.kill('SIGKILL');
  await p.exited;
}

async function addSignupWebhook(d: Deployment, rx: Receiver): Promise<void> {
  const r = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.signup', endpoint: `${rx.url}/signup` }, { 'x-service-admin-secret': d.adminSecret });
  expect(r.status).toBe(200);
  signupWebhook.set(d, r.body.id as string);
}

describe('outbox faults: kill -9 during a burst (all)', () => {
  let d: Deployment;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await startReceiver();
    d = await startDeployment('all', { flags: ['--allow-private-webhook-targets'], readyTimeoutMs: 90_000 });
    await addSignupWebhook(d, rx);
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await rx?.close();
  });

  it('every answered action is audited exactly once and every answered signup delivered, after a SIGKILL mid-burst', async () => {
    let killed = false;
    const b = burst(d, rx, () => killed);
    await b.underWay(4, 4);
    await sleep(200);
    killed = true;
    await sigkill(d, 'all');
    await b.end();
    expect({ answered: b.answered.webhooks.length > 0, refused: b.refused.slice(0, 3) }).toEqual({ answered: true, refused: [] });
    expect(b.answered.signups.length).toBeGreaterThan(0);

    // the process comes back on the same database
    await d.stopProcess('all');
    await d.startProcess('all');
    await expectNothingLost(d, rx, b.answered);
  }, 300_000);
});

describe('outbox faults: the bus killed, then authn and admin killed, during a burst (split, own nats-server)', () => {
  let d: Deployment;
  let rx: Receiver;
  let nats: ChildProcess | undefined;
  let port: number;
  let storeDir: string;

  beforeAll(async () => {
    rx = await startReceiver();
    port = await freePort();
    storeDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nats-'));
    nats = startNats(port, storeDir);
    await waitForPort(port);
    d = await startDeployment('split', { flags: ['--allow-private-webhook-targets'], natsUrl: `nats://127.0.0.1:${port}`, readyTimeoutMs: 180_000 });
    await addSignupWebhook(d, rx);
  }, 240_000);
  afterAll(async () => {
    await d?.stop();
    await killProcess(nats);
    await rx?.close();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  it('every answered action is audited exactly once and every answered signup delivered, after the bus and two services died mid-burst', async () => {
    let faulted = false;
    const b = burst(d, rx, () => faulted);
    await b.underWay(4, 4);
    // the bus dies: answers go on (the events wait in the outboxes)
    faulted = true;
    await killProcess(nats);
    const before = b.answered.signups.length;
    await b.underWay(b.answered.webhooks.length + 4, before + 4);
    expect(b.answered.signups.length).toBeGreaterThan(before);
    // then the services that hold the audited actions and the signup events die too
    await Promise.all([sigkill(d, 'authn'), sigkill(d, 'admin')]);
    await b.end();
    expect({ answered: b.answered.webhooks.length > 0, refused: b.refused.slice(0, 3) }).toEqual({ answered: true, refused: [] });

    // the bus comes back on its store, then the two services on their databases
    nats = startNats(port, storeDir);
    await waitForPort(port);
    for (const command of ['authn', 'admin'] as const) {
      await d.stopProcess(command);
      await d.startProcess(command);
    }
    await expectNothingLost(d, rx, b.answered);
  }, 480_000);
});
