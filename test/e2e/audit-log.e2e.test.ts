/**
 * @module test/e2e/audit-log
 * The audit log (issue 17; behaviour.md §5.7) in both modes (split: every `audit.recorded` event
 * crosses NATS JetStream to admin's consumer): each admin action of issue 17, each engine admin
 * action and each authn user action leaves one row with the right actor, resource and protocol;
 * the exact-match filters and the time range; and a failing audit store never fails the request
 * (the table is renamed away behind the server's back, the requests still succeed, and the rows
 * appear once it is back, because the events wait for redelivery).
 */
import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, startSmtpSink, type Deployment, type SmtpSink } from '@gatehouse/testing';
import { address, bearer, post, sleep } from './email-support.ts';
import { gql } from '../support/http.ts';
import { DOCS_MODEL } from '../support/authz-fixtures.ts';
import { openSql } from '../support/sql.ts';

const PASSWORD = 'Str0ng!pass';
const NEW_PASSWORD = 'N3w!passw0rd';

interface Row {
  id: string; actor_id: string | null; actor_type: string; actor_email: string | null; action: string;
  resource_type: string | null; resource_id: string | null; ip_address: string; user_agent: string; metadata: string; created_at: number;
}

describe.each(['all', 'split'] as const)('audit log (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let admin: Record<string, string>;
  const started = Math.floor(Date.now() / 1000) - 1;

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, {
      flags: [`--smtp-host=${sink.host}`, `--smtp-port=${sink.port}`, '--smtp-sender-email=noreply@gatehouse.test', '--enable-magic-link-login'],
      readyTimeoutMs: 90_000,
    });
    admin = { 'x-service-admin-secret': d.adminSecret };
  }, 150_000);
  afterAll(async () => {
    await d?.stop();
    await sink?.close();
  });

  const query = async (filter: Record<string, unknown>) => {
    const res = await post(d.url, '/v1/admin/audit_logs', { pagination: { limit: 1000 }, ...filter }, admin);
    expect(res.status).toBe(200);
    return res.body as { audit_logs: Row[]; pagination: { page: number; limit: number; offset: number; total: number } };
  };
  /**
   * waits until the rows matching `filter` hold every action of `actions`, `atLeast[action]` times where given
   * (in split mode each row crosses NATS on its own, so one action's rows can arrive apart)
   */
  const waitFor = async (filter: Record<string, unknown>, actions: string[], timeoutMs = 40_000, atLeast: Record<string, number> = {}): Promise<Row[]> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const rows = (await query(filter)).audit_logs;
      if (actions.every((a) => rows.filter((r) => r.action === a).length >= (atLeast[a] ?? 1))) return rows;
      if (Date.now() > until) throw new Error(`audit rows ${JSON.stringify(rows.map((r) => r.action))} lack some of ${JSON.stringify(actions)}`);
      await sleep(250);
    }
  };
  const protocolOf = (r: Row): string => (JSON.parse(r.metadata) as { protocol: string }).protocol;

  it('each authn user action leaves one row with the user as actor and resource, and the surface as protocol', async () => {
    const email = address('audit');
    const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    expect(signup.status).toBe(200);
    const userId = signup.body.user.id as string;
    const login = await gql(d.url, 'mutation($p: LoginRequest!) { login(params: $p) { access_token } }', { p: { email, password: PASSWORD } });
    const token = (login.body as any).data.login.access_token as string;
    const authn = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      await expect(authn.call('Login', { email, password: 'wrong-Passw0rd!' }, createCallContext({ protocol: 'grpc' }))).rejects.toMatchObject({ code: 'unauthenticated' });
    } finally {
      authn.close();
    }
    expect((await post(d.url, '/v1/update_profile', { given_name: 'Audrey' }, bearer(token))).status).toBe(200);
    expect((await post(d.url, '/v1/update_profile', { old_password: PASSWORD, new_password: NEW_PASSWORD, confirm_new_password: NEW_PASSWORD }, bearer(token))).status).toBe(200);
    expect((await post(d.url, '/v1/forgot_password', { email })).status).toBe(200);
    const reset = sink.tokenLink(await sink.waitForMail(email, { timeoutMs: 30_000 })).searchParams.get('token');
    expect((await post(d.url, '/v1/reset_password', { token: reset, password: PASSWORD, confirm_password: PASSWORD })).status).toBe(200);
    expect((await post(d.url, '/v1/magic_link_login', { email })).status).toBe(200);
    expect((await post(d.url, '/v1/resend_verify_email', { email, identifier: 'basic_auth_signup' })).status).toBe(200);
    const again = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect((await post(d.url, '/v1/logout', {}, bearer(again.body.access_token))).status).toBe(200);
    const last = await post(d.url, '/v1/login', { email, password: PASSWORD });
    expect((await post(d.url, '/v1/deactivate_account', {}, bearer(last.body.access_token))).status).toBe(200);

    const actions = [
      'user.signup', 'user.login_success', 'user.login_failed', 'user.profile_updated', 'user.password_changed', 'user.forgot_password_requested',
      'user.password_reset', 'user.magic_link_requested', 'user.verify_email_resent', 'user.logout', 'user.deactivated',
    ];
    const rows = await waitFor({ actor_id: userId }, actions, 40_000, { 'user.login_success': 3 });
    const count = (a: string): number => rows.filter((r) => r.action === a).length;
    expect(Object.fromEntries(actions.map((a) => [a, count(a)]))).toEqual({
      'user.signup': 1, 'user.login_success': 3, 'user.login_failed': 1, 'user.profile_updated': 1, 'user.password_changed': 1,
      'user.forgot_password_requested': 1, 'user.password_reset': 1, 'user.magic_link_requested': 1, 'user.verify_email_resent': 1,
      'user.logout': 1, 'user.deactivated': 1,
    });
    for (const r of rows) {
      expect({ action: r.action, actor_type: r.actor_type, actor_id: r.actor_id }).toEqual({ action: r.action, actor_type: 'user', actor_id: userId });
      expect(r.metadata).not.toContain(PASSWORD);
      expect(r.metadata).not.toContain(NEW_PASSWORD);
      expect(r.ip_address).not.toBe('');
    }
    const one = (a: string): Row => rows.find((r) => r.action === a)!;
    expect(one('user.signup')).toMatchObject({ resource_type: 'user', resource_id: userId, actor_email: email });
    expect(protocolOf(one('user.signup'))).toBe('rest');
    expect(rows.filter((r) => r.action === 'user.login_success').map(protocolOf).sort()).toEqual(['graphql', 'rest', 'rest']);
    expect(protocolOf(one('user.login_failed'))).toBe('grpc');
    expect(JSON.parse(one('user.profile_updated').metadata)).toEqual({ protocol: 'rest', changed_fields: ['given_name'] });
    expect(one('user.logout').resource_type).toBe('session');
    // newest first
    expect(rows.map((r) => r.created_at)).toEqual([...rows.map((r) => r.created_at)].sort((a, b) => b - a));
  }, 90_000);

  it('each admin action of issue 17 and each engine admin action leaves one row: a super-admin with actor_id null', async () => {
    const add = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.deleted', endpoint: 'https://hooks.example.com/in' }, admin);
    expect(add.status).toBe(200);
    const hookId = add.body.id as string;
    const upd = await gql(d.url, 'mutation($p: UpdateWebhookRequest!) { _update_webhook(params: $p) { message } }', { p: { id: hookId, enabled: false } }, { origin: d.url, ...admin });
    expect((upd.body as any).data._update_webhook.message).toBe('Webhook updated successfully.');
    const adminRpc = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      expect(await adminRpc.call('DeleteWebhook', { id: hookId }, createCallContext({ headers: admin, protocol: 'grpc' }))).toEqual({ message: 'Webhook deleted successfully' });
    } finally {
      adminRpc.close();
    }
    expect((await post(d.url, '/v1/admin/add_email_template', { event_name: 'verify_otp', subject: 'Code {{.otp}}', template: '<b>{{.otp}}</b>' }, admin)).status).toBe(200);
    const tpl = (await post(d.url, '/v1/admin/email_templates', {}, admin)).body.email_templates.find((t: any) => t.event_name === 'verify_otp');
    expect((await post(d.url, '/v1/admin/update_email_template', { id: tpl.id, design: '{}' }, admin)).status).toBe(200);
    expect((await post(d.url, '/v1/admin/delete_email_template', { id: tpl.id }, admin)).status).toBe(200);
    const model = await post(d.url, '/v1/admin/fga/model', { dsl: DOCS_MODEL }, admin);
    expect(model.status).toBe(200);
    const tuples = { tuples: [{ user: 'user:anne', relation: 'owner', object: 'doc:1' }] };
    expect((await post(d.url, '/v1/admin/fga/tuples', tuples, admin)).status).toBe(200);
    expect((await post(d.url, '/v1/admin/fga/tuples/delete', tuples, admin)).status).toBe(200);
    expect((await post(d.url, '/v1/admin/fga/reset', {}, admin)).status).toBe(200);

    const rows = await waitFor({ actor_id: null }, [
      'admin.webhook_created', 'admin.webhook_updated', 'admin.webhook_deleted', 'admin.email_template_created', 'admin.email_template_updated',
      'admin.email_template_deleted', 'admin.fga_model_written', 'admin.fga_tuples_written', 'admin.fga_tuples_deleted', 'admin.fga_reset',
    ]);
    const hookRows = (await query({ resource_type: 'webhook', resource_id: hookId })).audit_logs;
    // rows of one second tie on created_at, so compare as a set
    expect(hookRows.map((r) => [r.action, protocolOf(r), r.actor_type, r.actor_id]).sort()).toEqual([
      ['admin.webhook_created', 'rest', 'admin', null], ['admin.webhook_deleted', 'grpc', 'admin', null], ['admin.webhook_updated', 'graphql', 'admin', null],
    ]);
    expect(JSON.parse(hookRows.find((r) => r.action === 'admin.webhook_updated')!.metadata)).toEqual({ protocol: 'graphql', changed_fields: ['enabled'] });
    const tplRows = (await query({ resource_type: 'email_template', resource_id: tpl.id })).audit_logs;
    expect(tplRows.map((r) => r.action).sort()).toEqual(['admin.email_template_created', 'admin.email_template_deleted', 'admin.email_template_updated']);
    const fga = rows.filter((r) => r.action.startsWith('admin.fga_'));
    expect(fga.find((r) => r.action === 'admin.fga_model_written')).toMatchObject({ resource_type: 'fga_model', resource_id: model.body.id, actor_type: 'admin' });
    expect(JSON.parse(fga.find((r) => r.action === 'admin.fga_tuples_written')!.metadata)).toEqual({ protocol: 'rest', tuple_count: 1 });
    expect(rows.every((r) => !r.metadata.includes(d.adminSecret))).toBe(true);
  }, 90_000);

  it('filters: exact action, actor and resource; from_timestamp ≤ created_at ≤ to_timestamp; pagination', async () => {
    const all = await query({});
    expect(all.pagination.total).toBeGreaterThan(10);
    const logins = await query({ action: 'user.login_success' });
    expect(logins.audit_logs.every((r) => r.action === 'user.login_success')).toBe(true);
    expect((await query({ action: 'user.login' })).pagination.total).toBe(0);
    expect((await query({ from_timestamp: started, to_timestamp: Math.floor(Date.now() / 1000) + 1 })).pagination.total).toBe(all.pagination.total);
    expect((await query({ to_timestamp: started - 1 })).pagination.total).toBe(0);
    expect((await query({ from_timestamp: Math.floor(Date.now() / 1000) + 3600 })).pagination.total).toBe(0);
    const page2 = await post(d.url, '/v1/admin/audit_logs', { pagination: { page: 2, limit: 3 } }, admin);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 3, offset: 3, total: all.pagination.total });
    expect(page2.body.audit_logs.map((r: Row) => r.id)).toEqual(all.audit_logs.slice(3, 6).map((r) => r.id));
    const bad = await post(d.url, '/v1/admin/audit_logs', { pagination: { limit: 1001 } }, admin);
    expect({ status: bad.status, body: bad.body }).toEqual({ status: 400, body: { code: 'invalid_argument', message: 'limit must be between 1 and 1000' } });
    const graph = await gql(d.url, 'query($p: ListAuditLogRequest) { _audit_logs(params: $p) { pagination { total } audit_logs { action } } }',
      { p: { action: 'user.login_success' } }, { origin: d.url, ...admin });
    expect((graph.body as any).data._audit_logs.pagination.total).toBe(logins.pagination.total);
  }, 60_000);

  it('a failing audit store never fails the request; the rows appear once it is back', async () => {
    const rename = async (from: string, to: string): Promise<void> => {
      if (d.databaseType === 'sqlite') {
        const db = new Sqlite(d.databaseUrl);
        try {
          db.pragma('busy_timeout = 5000');
          db.prepare(`alter table ${from} rename to ${to}`).run();
        } finally {
          db.close();
        }
        return;
      }
      const sql = await openSql(d.databaseUrl);
      try {
        await sql.query(`alter table ${from} rename to ${to}`);
      } finally {
        await sql.close();
      }
    };
    await rename('admin_audit_logs', 'admin_audit_logs_away');
    const email = address('down');
    let add: Awaited<ReturnType<typeof post>>;
    let userId = '';
    try {
      const signup = await post(d.url, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
      expect(signup.status).toBe(200);
      userId = signup.body.user.id as string;
      expect((await post(d.url, '/v1/login', { email, password: PASSWORD })).status).toBe(200);
      add = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.created', endpoint: 'https://hooks.example.com/x' }, admin);
      expect(add.status).toBe(200);
      await sleep(1500);
    } finally {
      await rename('admin_audit_logs_away', 'admin_audit_logs');
    }
    await waitFor({ resource_type: 'webhook', resource_id: add.body.id }, ['admin.webhook_created'], 60_000);
    // this user's rows: rows of earlier tests must not satisfy the wait before the redelivery lands
    const user = await waitFor({ actor_id: userId }, ['user.signup', 'user.login_success'], 60_000);
    expect(user.filter((r) => r.action === 'user.login_success').map((r) => r.actor_email)).toEqual([email]);
  }, 120_000);
});
