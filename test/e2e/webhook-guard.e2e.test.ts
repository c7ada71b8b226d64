/**
 * @module test/e2e/webhook-guard
 * The outbound request guard (issue 17; behaviour.md §5.6) without --allow-private-webhook-targets,
 * in both modes: every refused range (and IPv4-mapped, decimal and `localhost` forms) is refused at
 * save and by test_endpoint; a webhook whose name later resolves to 127.0.0.1 (the stored endpoint is
 * changed behind the server's back, as a DNS change would) is refused again at delivery time, logged
 * once as `SSRF validation failed: …` and not retried. Also: bad input on every new admin route
 * answers the §5 errors, never a 5xx.
 */
import { randomUUID } from 'node:crypto';
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { address, post, signup, sleep } from './email-support.ts';
import { gql } from '../support/http.ts';
import { openSql } from '../support/sql.ts';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

const PRIVATE = 'invalid endpoint: requests to private/internal networks are not allowed';
/** One address of each range of §5.6, and the spellings that hide them. */
const REFUSED = [
  'http://0.0.0.0/', 'http://10.1.2.3/', 'http://100.64.0.1/', 'http://127.0.0.1/', 'http://169.254.169.254/latest/meta-data',
  'http://172.16.5.4/', 'http://192.0.0.1/', 'http://192.168.0.1/', 'http://198.18.0.1/', 'http://224.0.0.1/', 'http://240.0.0.1/',
  'http://[::]/', 'http://[::1]/', 'http://[fc00::1]/', 'http://[fe80::1]/', 'http://[ff02::1]/',
  'http://[::ffff:127.0.0.1]/', 'http://[::ffff:a9fe:a9fe]/', 'http://2130706433/', 'http://0x7f.1/', 'http://localhost:8080/hook',
];

describe.each(['all', 'split'] as const)('webhook outbound guard and bad input (%s)', (mode) => {
  let d: Deployment;
  let rx: Receiver;
  let admin: Record<string, string>;

  beforeAll(async () => {
    rx = await startReceiver();
    d = await startDeployment(mode, { readyTimeoutMs: 90_000 });
    admin = { 'x-service-admin-secret': d.adminSecret };
  }, 150_000);
  afterAll(async () => {
    await d?.stop();
    await rx?.close();
  });

  it('refuses every private or special-purpose target at save (add and update) and in test_endpoint', async () => {
    const ok = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.signup', endpoint: 'https://hooks.example.com/in' }, admin);
    expect(ok.status).toBe(200);
    for (const endpoint of REFUSED) {
      const add = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.signup', endpoint }, admin);
      expect({ endpoint, status: add.status, body: add.body }).toEqual({ endpoint, status: 400, body: { code: 'invalid_argument', message: PRIVATE } });
      const upd = await post(d.url, '/v1/admin/update_webhook', { id: ok.body.id, endpoint }, admin);
      expect({ endpoint, status: upd.status, body: upd.body }).toEqual({ endpoint, status: 400, body: { code: 'invalid_argument', message: PRIVATE } });
      const test = await post(d.url, '/v1/admin/test_endpoint', { event_name: 'user.login', endpoint }, admin);
      expect({ endpoint, status: test.status, body: test.body }).toEqual({ endpoint, status: 400, body: { code: 'invalid_argument', message: PRIVATE } });
    }
    const graph = await gql(d.url, 'mutation($p: AddWebhookRequest!) { _add_webhook(params: $p) { id } }', { p: { event_name: 'user.signup', endpoint: 'http://localhost/' } }, { origin: d.url, ...admin });
    expect((graph.body as any).errors.map((e: any) => [e.message, e.extensions.code])).toEqual([[PRIVATE, 'INVALID_ARGUMENT']]);
    expect(rx.at('/').length).toBe(0);
    await post(d.url, '/v1/admin/delete_webhook', { id: ok.body.id }, admin);
  }, 60_000);

  it('refuses a name that resolves to 127.0.0.1 at delivery time: one log row, not retried, nothing received', async () => {
    const add = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.signup', endpoint: 'https://hooks.example.com/in' }, admin);
    expect(add.status).toBe(200);
    // the stored name now resolves to the loopback interface (what a DNS change to 127.0.0.1 does)
    const endpoint = `http://localhost:${rx.port}/rebound`;
    if (d.databaseType === 'sqlite') {
      const db = new Sqlite(d.databaseUrl);
      try {
        db.pragma('busy_timeout = 5000');
        db.prepare('update admin_webhooks set endpoint = ? where id = ?').run(endpoint, add.body.id);
      } finally {
        db.close();
      }
    } else {
      const sql = await openSql(d.databaseUrl);
      try {
        await sql.query('update admin_webhooks set endpoint = $1 where id = $2', [endpoint, add.body.id]);
      } finally {
        await sql.close();
      }
    }
    await signup(d.url, address('rebound'));
    const until = Date.now() + 30_000;
    let logs: any[] = [];
    while (logs.length === 0 && Date.now() < until) {
      logs = (await post(d.url, '/v1/admin/webhook_logs', { webhook_id: add.body.id }, admin)).body.webhook_logs;
      await sleep(250);
    }
    await sleep(3500);
    logs = (await post(d.url, '/v1/admin/webhook_logs', { webhook_id: add.body.id }, admin)).body.webhook_logs;
    expect(logs.map((l) => [l.attempt, l.http_status, l.response]))
      .toEqual([[1, 0, 'SSRF validation failed: requests to private/internal networks are not allowed']]);
    expect(rx.at('/rebound')).toHaveLength(0);
  }, 60_000);

  it('bad input on every new route answers the §5 errors, never a 5xx', async () => {
    const unknown = randomUUID();
    const long = `https://example.com/${'a'.repeat(3000)}`;
    const headers21 = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v']));
    const cases: Array<[string, unknown, number, string, string | null]> = [
      ['add_webhook', {}, 400, 'invalid_argument', 'invalid event name '],
      ['add_webhook', { event_name: 'user.signed_up', endpoint: 'https://example.com' }, 400, 'invalid_argument', 'invalid event name user.signed_up'],
      ['add_webhook', { event_name: 'user.signup' }, 400, 'invalid_argument', 'empty endpoint not allowed'],
      ['add_webhook', { event_name: 'user.signup', endpoint: '   ' }, 400, 'invalid_argument', 'empty endpoint not allowed'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'ftp://example.com/' }, 400, 'invalid_argument', 'invalid endpoint: only http and https schemes are allowed'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'http//nope' }, 400, 'invalid_argument', 'invalid endpoint: malformed URL'],
      ['add_webhook', { event_name: 'user.signup', endpoint: long }, 400, 'invalid_argument', 'invalid endpoint: URL is too long'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'https://example.com', headers: { 'Content-Type': 'text/plain' } }, 400, 'invalid_argument', 'header Content-Type cannot be overridden'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'https://example.com', headers: { 'x-service-signature': 'x' } }, 400, 'invalid_argument', 'header x-service-signature cannot be overridden'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'https://example.com', headers: headers21 }, 400, 'invalid_argument', 'at most 20 headers are allowed'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'https://example.com', headers: { 'x-n': 5 } }, 400, 'invalid_argument', 'header x-n must be a string'],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'https://example.com', headers: { 'bad name': 'v' } }, 400, 'invalid_argument', 'invalid header name bad name'],
      ['add_webhook', { event_name: 5, endpoint: 'https://example.com' }, 400, 'invalid_argument', null],
      ['add_webhook', { event_name: 'user.signup', endpoint: 'https://example.com', enabled: 'yes' }, 400, 'invalid_argument', null],
      ['update_webhook', {}, 400, 'invalid_argument', 'webhook ID required'],
      ['update_webhook', { id: unknown }, 404, 'not_found', 'webhook not found'],
      ['update_webhook', { id: 'not-a-uuid' }, 404, 'not_found', 'webhook not found'],
      ['delete_webhook', { id: '' }, 400, 'invalid_argument', 'webhook ID required'],
      ['delete_webhook', { id: unknown }, 404, 'not_found', 'webhook not found'],
      ['webhook', {}, 400, 'invalid_argument', 'webhook ID required'],
      // an id outside the id shape (visible ASCII, no spaces) is refused before any lookup
      ['webhook', { id: "1' or '1'='1" }, 400, 'invalid_argument', 'invalid value for field "id": expected an id (visible ASCII characters)'],
      ['webhooks', { limit: 1001 }, 400, 'invalid_argument', 'limit must be between 1 and 1000'],
      ['webhooks', { page: -1 }, 400, 'invalid_argument', 'page must be at least 1'],
      ['webhooks', { limit: 'ten' }, 400, 'invalid_argument', null],
      ['webhook_logs', { webhook_id: unknown }, 404, 'not_found', 'webhook not found'],
      ['webhook_logs', { pagination: { limit: -5 } }, 400, 'invalid_argument', 'limit must be between 1 and 1000'],
      ['test_endpoint', {}, 400, 'invalid_argument', 'invalid event name '],
      ['test_endpoint', { event_name: 'user.login' }, 400, 'invalid_argument', 'empty endpoint not allowed'],
      ['add_email_template', {}, 400, 'invalid_argument', 'invalid event name '],
      ['add_email_template', { event_name: 'user.signup', subject: 's', template: 't' }, 400, 'invalid_argument', 'invalid event name user.signup'],
      ['add_email_template', { event_name: 'verify_otp' }, 400, 'invalid_argument', 'subject is required'],
      ['add_email_template', { event_name: 'verify_otp', subject: ' ' }, 400, 'invalid_argument', 'subject is required'],
      ['add_email_template', { event_name: 'verify_otp', subject: 'x' }, 400, 'invalid_argument', 'template is required'],
      ['add_email_template', { event_name: 'verify_otp', subject: '{{.user.email | upper}}', template: 't' }, 400, 'invalid_argument', 'unsupported template syntax: {{.user.email | upper}}'],
      ['add_email_template', { event_name: 'verify_otp', subject: 'x', template: '<p>{{ .otp }</p>' }, 400, 'invalid_argument', 'unsupported template syntax: {{ .otp }</p>'],
      ['add_email_template', { event_name: 'verify_otp', subject: 'x', template: 'x'.repeat(300_000) }, 400, 'invalid_argument', 'template is too large'],
      ['update_email_template', {}, 400, 'invalid_argument', 'email template ID required'],
      ['update_email_template', { id: unknown, subject: 'x' }, 404, 'not_found', 'email template not found'],
      ['delete_email_template', { id: unknown }, 404, 'not_found', 'email template not found'],
      ['email_templates', { limit: 5000 }, 400, 'invalid_argument', 'limit must be between 1 and 1000'],
      ['audit_logs', { from_timestamp: -5 }, 400, 'invalid_argument', 'from_timestamp must be a Unix timestamp in seconds'],
      ['audit_logs', { to_timestamp: 'soon' }, 400, 'invalid_argument', null],
      ['audit_logs', { pagination: { page: -2 } }, 400, 'invalid_argument', 'page must be at least 1'],
    ];
    for (const [route, body, status, code, message] of cases) {
      const res = await post(d.url, `/v1/admin/${route}`, body, admin);
      const got = { route, body, status: res.status, code: res.body?.code, ...(message === null ? {} : { message: res.body?.message }) };
      expect(got).toEqual({ route, body, status, code, ...(message === null ? {} : { message }) });
    }
  }, 60_000);
});
