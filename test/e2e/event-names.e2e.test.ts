/**
 * @module test/e2e/event-names
 * Issue 35 §3, the RPC added the new way (its proto with its REST and GraphQL options, its handler,
 * this test): `GET /v1/admin/event_names`, GraphQL `_event_names` and gRPC `AdminService.EventNames`
 * list the event names `_add_webhook` and `_add_email_template` accept, to a super-admin only, against
 * a real all-in-one server.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { gql, raw } from '../support/http.ts';

const WEBHOOK_EVENTS = [
  'user.created', 'user.signup', 'user.login', 'user.access_revoked', 'user.access_enabled', 'user.deleted',
  'user.deactivated', 'user.provisioned', 'user.deprovisioned', 'user.scim_updated',
  'group.created', 'group.updated', 'group.deleted',
];
const EMAIL_TEMPLATE_EVENTS = ['basic_auth_signup', 'magic_link_login', 'update_email', 'forgot_password', 'invite_member', 'verify_otp'];
const WANT = { webhook_events: WEBHOOK_EVENTS, email_template_events: EMAIL_TEMPLATE_EVENTS };

describe('the event names of webhooks and email templates (all-in-one)', () => {
  let d: Deployment;
  let admin: Record<string, string>;
  beforeAll(async () => {
    d = await startDeployment('all', { readyTimeoutMs: 90_000 });
    admin = { 'x-service-admin-secret': d.adminSecret };
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  it('REST: GET /v1/admin/event_names answers the lists to a super-admin, 401 {code,message} to anyone else', async () => {
    const ok = await raw(`${d.url}/v1/admin/event_names`, { headers: admin });
    expect({ status: ok.status, body: ok.body }).toEqual({ status: 200, body: WANT });
    const anonymous = await raw(`${d.url}/v1/admin/event_names`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ code: 'unauthenticated', message: expect.any(String) });
    const wrong = await raw(`${d.url}/v1/admin/event_names`, { headers: { 'x-service-admin-secret': `${d.adminSecret}-not` } });
    expect(wrong.status).toBe(401);
  });

  it('GraphQL: _event_names, generated from the proto, answers the same; UNAUTHENTICATED without the secret', async () => {
    const query = '{ _event_names { webhook_events email_template_events } }';
    const ok = await gql(d.url, query, {}, { origin: d.url, ...admin });
    expect(ok.body).toEqual({ data: { _event_names: WANT } });
    const anonymous = await gql(d.url, query);
    expect(anonymous.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  }, 90_000);

  it('gRPC: AdminService.EventNames on the public port answers the same', async () => {
    const client = createGrpcClient(serviceDescriptor('admin'), { address: d.grpcAddress });
    try {
      const res = await client.call('EventNames', {}, createCallContext({ headers: admin }));
      expect(res).toEqual(WANT);
    } finally {
      client.close();
    }
  }, 60_000);
});
