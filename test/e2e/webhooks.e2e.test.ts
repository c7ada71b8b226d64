/**
 * @module test/e2e/webhooks
 * Webhooks delivered at least once and email templates (issue 17; behaviour.md §5.4, §5.5, §5.6, §8),
 * in both modes (split: every event, job and attempt crosses NATS JetStream). The receiver is an HTTP
 * server of the test's own on 127.0.0.1, so the deployment runs with --allow-private-webhook-targets;
 * it verifies each signature with the secret the API returned.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, startSmtpSink, type Deployment, type SmtpSink } from '@gatehouse/testing';
import { address, emailFlags, post, signup, sleep } from './email-support.ts';
import { gql } from '../support/http.ts';
import { startReceiver, verifySignature, type Receiver } from '../support/webhook-receiver.ts';

describe.each(['all', 'split'] as const)('webhooks and email templates (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  let rx: Receiver;
  let admin: Record<string, string>;

  beforeAll(async () => {
    sink = await startSmtpSink();
    rx = await startReceiver();
    d = await startDeployment(mode, { flags: [...emailFlags(sink), '--allow-private-webhook-targets'], readyTimeoutMs: 90_000 });
    admin = { 'x-service-admin-secret': d.adminSecret };
  }, 150_000);
  afterAll(async () => {
    await d?.stop();
    await rx?.close();
    await sink?.close();
  });

  const addHook = async (path: string, more: Record<string, unknown> = {}) => {
    const res = await post(d.url, '/v1/admin/add_webhook', { event_name: 'user.signup', endpoint: `${rx.url}${path}`, ...more }, admin);
    expect(res.status).toBe(200);
    return res.body as { message: string; id: string; signing_secret: string };
  };
  const logsOf = async (webhookId: string) =>
    (await post(d.url, '/v1/admin/webhook_logs', { webhook_id: webhookId, pagination: { limit: 100 } }, admin)).body as { webhook_logs: any[]; pagination: any };
  const waitForLogs = async (webhookId: string, count: number, timeoutMs = 30_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const page = await logsOf(webhookId);
      if (page.webhook_logs.length >= count) return page;
      if (Date.now() > until) throw new Error(`${page.webhook_logs.length} of ${count} log rows after ${timeoutMs} ms`);
      await sleep(200);
    }
  };
  const remove = (id: string) => post(d.url, '/v1/admin/delete_webhook', { id }, admin);

  it('a stored template changes the mail the SMTP sink receives; unsupported syntax and a second template are refused', async () => {
    const add = await post(d.url, '/v1/admin/add_email_template', {
      event_name: 'basic_auth_signup', subject: 'Welcome {{.user.email}} to {{ .organization.name }}',
      template: '<p>Hi {{ .user.given_name }}, <a href="{{.verification_url}}">confirm</a></p>',
    }, admin);
    expect(add).toMatchObject({ status: 200, body: { message: 'Email template added successfully' } });
    const bad = await post(d.url, '/v1/admin/add_email_template', { event_name: 'forgot_password', subject: 'x', template: '<p>{{if .user.email}}x{{end}}</p>' }, admin);
    expect({ status: bad.status, body: bad.body }).toEqual({ status: 400, body: { code: 'invalid_argument', message: 'unsupported template syntax: {{if .user.email}}' } });
    const twice = await post(d.url, '/v1/admin/add_email_template', { event_name: 'basic_auth_signup', subject: 'x', template: 'y' }, admin);
    expect({ status: twice.status, body: twice.body }).toEqual({ status: 409, body: { code: 'already_exists', message: 'an email template for this event already exists' } });

    const email = address('tpl');
    expect((await signup(d.url, email, { given_name: '<b>Ann</b>' })).status).toBe(200);
    const mail = await sink.waitForMail(email, { timeoutMs: 30_000 });
    expect(mail.subject).toBe(`Welcome ${email} to Gatehouse`);
    expect(mail.html).toContain('Hi &lt;b&gt;Ann&lt;/b&gt;, <a href="');
    const token = sink.tokenLink(mail).searchParams.get('token');
    expect(token).toBeTruthy();
    // redeeming the link is the audited user.email_verified (behaviour.md §5.7)
    expect((await post(d.url, '/v1/verify_email', { token })).status).toBe(200);
    const until = Date.now() + 20_000;
    let verified: any[] = [];
    while (verified.length === 0 && Date.now() < until) {
      verified = (await post(d.url, '/v1/admin/audit_logs', { action: 'user.email_verified' }, admin)).body.audit_logs.filter((r: any) => r.actor_email === email);
      if (verified.length === 0) await sleep(250);
    }
    expect(verified).toHaveLength(1);
    expect(verified[0]).toMatchObject({ actor_type: 'user', resource_type: 'user', resource_id: verified[0].actor_id });

    const list = await post(d.url, '/v1/admin/email_templates', {}, admin);
    const stored = (list.body.email_templates as any[]).find((t) => t.event_name === 'basic_auth_signup');
    // the same answer on GraphQL and gRPC, and the same refusal
    const graph = await gql(d.url, `query { _email_templates { pagination { page limit offset total }
      email_templates { id event_name subject template design created_at updated_at } } }`, {}, { origin: d.url, ...admin });
    expect((graph.body as any).data._email_templates).toEqual(list.body);
    const graphBad = await gql(d.url, 'mutation($p: AddEmailTemplateRequest!) { _add_email_template(params: $p) { message } }',
      { p: { event_name: 'forgot_password', subject: 'x', template: '{{ .a | b }}' } }, { origin: d.url, ...admin });
    expect((graphBad.body as any).errors.map((e: any) => [e.message, e.extensions.code])).toEqual([['unsupported template syntax: {{ .a | b }}', 'INVALID_ARGUMENT']]);
    const rpc = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      expect(await rpc.call('EmailTemplates', {}, createCallContext({ headers: admin, protocol: 'grpc' }))).toEqual(list.body);
    } finally {
      rpc.close();
    }
    expect(stored).toMatchObject({ design: '', subject: 'Welcome {{.user.email}} to {{ .organization.name }}' });
    expect((await post(d.url, '/v1/admin/update_email_template', { id: stored.id, subject: 'Second {{.user.email}}' }, admin)).body)
      .toEqual({ message: 'Email template updated successfully.' });
    expect((await post(d.url, '/v1/admin/delete_email_template', { id: stored.id }, admin)).body).toEqual({ message: 'Email template deleted successfully' });
  }, 60_000);

  it('delivers user.signup signed with the webhook\'s own secret, and logs the attempt', async () => {
    const hook = await addHook('/signed', { headers: { 'x-api-key': 'k1' } });
    expect(hook.message).toBe('Webhook added successfully');
    expect(hook.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const shown = await post(d.url, '/v1/admin/webhook', { id: hook.id }, admin);
    expect(shown.body).toEqual({
      id: hook.id, event_name: 'user.signup', event_description: 'user signup', endpoint: `${rx.url}/signed`, enabled: true,
      headers: { 'x-api-key': 'k1' }, created_at: expect.any(Number), updated_at: expect.any(Number),
    });

    const email = address('hook');
    await signup(d.url, email);
    const [req] = await rx.waitFor('/signed', 1);
    expect(verifySignature(hook.signing_secret, req!.raw, req!.headers['x-service-signature'])).toBe(true);
    expect(req!.headers['user-agent']).toBe('Gatehouse-Webhook/1');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['x-api-key']).toBe('k1');
    expect(req!.body).toMatchObject({
      webhook_id: hook.id, event_name: 'user.signup', event_description: 'user signup', auth_recipe: 'basic_auth',
      user: { email, email_verified: false }, delivery_id: expect.stringMatching(/^[0-9a-f-]{36}$/), created_at: expect.any(Number),
    });
    const logs = await waitForLogs(hook.id, 1);
    expect(logs.webhook_logs[0]).toEqual({
      id: expect.any(String), webhook_id: hook.id, delivery_id: req!.body.delivery_id, attempt: 1, http_status: 200,
      request: req!.raw, response: 'ok', created_at: expect.any(Number), updated_at: expect.any(Number),
    });

    // a rotated secret signs the next delivery; the old one no longer verifies
    const rotated = await post(d.url, '/v1/admin/update_webhook', { id: hook.id, rotate_signing_secret: true }, admin);
    expect(rotated.body).toEqual({ message: 'Webhook updated successfully.', signing_secret: expect.stringMatching(/^whsec_/) });
    await signup(d.url, address('hook'));
    const [, second] = await rx.waitFor('/signed', 2);
    expect(verifySignature(rotated.body.signing_secret, second!.raw, second!.headers['x-service-signature'])).toBe(true);
    expect(verifySignature(hook.signing_secret, second!.raw, second!.headers['x-service-signature'])).toBe(false);
    expect((await remove(hook.id)).body).toEqual({ message: 'Webhook deleted successfully' });
    expect((await logsOf(hook.id))).toBeDefined();
  }, 60_000);

  it('a receiver that fails twice then succeeds gets one event in three attempts with the same delivery_id, three log rows', async () => {
    rx.script('/flaky', (n) => (n < 2 ? { status: 503, body: `down ${n + 1}` } : { status: 204 }));
    const hook = await addHook('/flaky');
    await signup(d.url, address('flaky'));
    const reqs = await rx.waitFor('/flaky', 3);
    expect(new Set(reqs.map((r) => r.body.delivery_id)).size).toBe(1);
    expect(new Set(reqs.map((r) => r.raw)).size).toBe(1);
    const logs = await waitForLogs(hook.id, 3);
    expect(logs.pagination).toEqual({ page: 1, limit: 100, offset: 0, total: 3 });
    const rows = [...logs.webhook_logs].sort((a, b) => a.attempt - b.attempt);
    expect(rows.map((r) => [r.attempt, r.http_status, r.response, r.delivery_id]))
      .toEqual([[1, 503, 'down 1', reqs[0]!.body.delivery_id], [2, 503, 'down 2', reqs[0]!.body.delivery_id], [3, 204, '', reqs[0]!.body.delivery_id]]);
    await sleep(2500);
    expect(rx.at('/flaky')).toHaveLength(3);
    await remove(hook.id);
  }, 60_000);

  it('does not follow a redirect, and does not retry it', async () => {
    rx.script('/moved', () => ({ status: 302, headers: { location: `${rx.url}/moved-target` }, body: 'see other' }));
    const hook = await addHook('/moved');
    await signup(d.url, address('moved'));
    await rx.waitFor('/moved', 1);
    const logs = await waitForLogs(hook.id, 1);
    await sleep(3000);
    expect(rx.at('/moved-target')).toHaveLength(0);
    expect(rx.at('/moved')).toHaveLength(1);
    expect((await logsOf(hook.id)).webhook_logs.map((r) => [r.attempt, r.http_status])).toEqual([[1, 302]]);
    expect(logs.webhook_logs[0].response).toBe('see other');
    await remove(hook.id);
  }, 60_000);

  it('test_endpoint returns the receiver\'s status and body on REST, GraphQL and gRPC, unsigned, with no log row', async () => {
    rx.script('/teapot', () => ({ status: 418, body: 'short and stout' }));
    const before = (await post(d.url, '/v1/admin/webhook_logs', {}, admin)).body.pagination.total;
    const rest = await post(d.url, '/v1/admin/test_endpoint', { event_name: 'user.login', endpoint: `${rx.url}/teapot`, headers: { 'x-t': '1' } }, admin);
    expect({ status: rest.status, body: rest.body }).toEqual({ status: 200, body: { http_status: 418, response: 'short and stout' } });
    const graph = await gql(d.url, 'mutation($p: TestEndpointRequest!) { _test_endpoint(params: $p) { http_status response } }',
      { p: { event_name: 'group.created', endpoint: `${rx.url}/teapot` } }, { origin: d.url, ...admin });
    expect(graph.body).toEqual({ data: { _test_endpoint: { http_status: 418, response: 'short and stout' } } });
    const client = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      const grpc = await client.call('TestEndpoint', { event_name: 'user.deleted', endpoint: `${rx.url}/teapot` }, createCallContext({ headers: admin, protocol: 'grpc' }));
      expect(grpc).toEqual({ http_status: 418, response: 'short and stout' });
    } finally {
      client.close();
    }
    const reqs = rx.at('/teapot');
    expect(reqs).toHaveLength(3);
    expect(reqs.map((r) => r.headers['x-service-signature'])).toEqual([undefined, undefined, undefined]);
    expect(reqs[0]!.body).toMatchObject({ webhook_id: null, event_name: 'user.login', user: { email: 'test_endpoint@example.com' } });
    expect(reqs[0]!.headers['x-t']).toBe('1');
    expect(reqs[1]!.body.group).toMatchObject({ display_name: expect.any(String) });
    expect((await post(d.url, '/v1/admin/webhook_logs', {}, admin)).body.pagination.total).toBe(before);
    // a receiver that is down: http_status 0 and the error text
    const down = await post(d.url, '/v1/admin/test_endpoint', { event_name: 'user.login', endpoint: 'http://127.0.0.1:1/' }, admin);
    expect(down.body).toEqual({ http_status: 0, response: expect.stringMatching(/ECONNREFUSED/) });
  }, 60_000);

  if (mode === 'split') {
    it('three events while the notifications process is stopped are each delivered once it starts again', async () => {
      const hook = await addHook('/later');
      await d.stopProcess('notifications');
      const emails = [address('later'), address('later'), address('later')];
      for (const e of emails) expect((await signup(d.url, e)).status).toBe(200);
      await sleep(2000);
      expect(rx.at('/later')).toHaveLength(0);
      await d.startProcess('notifications');
      const reqs = await rx.waitFor('/later', 3, 60_000);
      expect(reqs.map((r) => r.body.user.email).sort()).toEqual([...emails].sort());
      expect(new Set(reqs.map((r) => r.body.delivery_id)).size).toBe(3);
      await waitForLogs(hook.id, 3);
      await remove(hook.id);
    }, 120_000);
  }

  it('webhook, webhooks and webhook_logs answer the same on REST, GraphQL and gRPC', async () => {
    const hook = await addHook('/surfaces', { event_name: 'user.deleted', headers: { 'x-k': 'v' } });
    const rest = {
      one: (await post(d.url, '/v1/admin/webhook', { id: hook.id }, admin)).body,
      list: (await post(d.url, '/v1/admin/webhooks', { limit: 1000 }, admin)).body,
      logs: (await post(d.url, '/v1/admin/webhook_logs', { webhook_id: hook.id }, admin)).body,
    };
    const fields = 'id event_name event_description endpoint enabled headers created_at updated_at';
    const graph = (await gql(d.url, `query($id: WebhookRequest!, $p: PaginationRequest, $l: ListWebhookLogRequest) {
      _webhook(params: $id) { ${fields} }
      _webhooks(params: $p) { pagination { page limit offset total } webhooks { ${fields} } }
      _webhook_logs(params: $l) { pagination { page limit offset total } webhook_logs { id } }
    }`, { id: { id: hook.id }, p: { limit: 1000 }, l: { webhook_id: hook.id } }, { origin: d.url, ...admin })).body as any;
    expect(graph.data).toEqual({ _webhook: rest.one, _webhooks: rest.list, _webhook_logs: rest.logs });
    const client = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      const ctx = createCallContext({ headers: admin, protocol: 'grpc' });
      expect(await client.call('Webhook', { id: hook.id }, ctx)).toEqual(rest.one);
      expect(await client.call('Webhooks', { limit: 1000 }, ctx)).toEqual(rest.list);
      expect(await client.call('WebhookLogs', { webhook_id: hook.id }, ctx)).toEqual(rest.logs);
      await expect(client.call('Webhook', { id: '' }, ctx)).rejects.toMatchObject({ code: 'invalid_argument', message: 'webhook ID required' });
    } finally {
      client.close();
    }
    expect(rest.one.headers).toEqual({ 'x-k': 'v' });
    expect(JSON.stringify(rest.list)).not.toContain('whsec_');
    await remove(hook.id);
  }, 60_000);

  it('webhooks: the list is paginated newest first; a disabled webhook gets nothing', async () => {
    const a = await addHook('/off', { enabled: false, event_description: 'quiet' });
    const b = await addHook('/on2', { event_name: 'user.created' });
    const page = await post(d.url, '/v1/admin/webhooks', { page: 1, limit: 1 }, admin);
    expect(page.body.pagination).toEqual({ page: 1, limit: 1, offset: 0, total: expect.any(Number) });
    expect(page.body.webhooks).toHaveLength(1);
    const past = await post(d.url, '/v1/admin/webhooks', { page: 1000, limit: 10 }, admin);
    expect(past.body).toEqual({ webhooks: [], pagination: { page: 1000, limit: 10, offset: 9990, total: page.body.pagination.total } });
    await signup(d.url, address('off'));
    await rx.waitFor('/on2', 1);
    expect(rx.at('/off')).toHaveLength(0);
    await remove(a.id);
    await remove(b.id);
  }, 60_000);
});
