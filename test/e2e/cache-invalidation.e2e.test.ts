/**
 * @module test/e2e/cache-invalidation
 * Issue 22 §1: credentials and the authz store revision answer from memory on every deployment, and a
 * write on one replica is honoured by every replica on its next request after the write returns
 * (behaviour.md §2.1 "valid only while its session exists", §2.2 "every session of the user is deleted
 * before the response is sent", §7.1 read-your-writes across replicas). Deployments: all-in-one SQLite;
 * two all-in-one replicas on PostgreSQL without Redis (LISTEN/NOTIFY) and with Redis (pub/sub); split
 * mode with two authn and two authz processes (Redis pub/sub). Each is run again with the test-only
 * flag `--test-notifications-off` (libs/auth README): with notifications cut, the same holds once
 * the documented polling interval (INVALIDATION_POLL_MS) has passed.
 *
 * Every credential is used a few times on every replica first, so each replica's caches hold it.
 */
import { describe, it, expect, beforeAll, afterAll, jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { INVALIDATION_POLL_MS } from '@gatehouse/auth';
import { startDeployment, startSmtpSink, type Deployment, type SmtpSink, type StartOptions } from '@gatehouse/testing';
import { closeGrpcClients, grpc, rest, type Call, type Credentials, type Result, type Target } from '../support/surfaces.ts';
import { PASSWORD, expectOk, freshEmail, sessionCookie } from '../support/scenario.ts';
import { postJson } from '../support/http.ts';
import { DOCS_MODEL } from '../support/authz-fixtures.ts';
import { authzGrpc, authzRest, closeAuthzClients, okBody, type AuthzCall } from '../support/authz-surfaces.ts';

jest.setTimeout(180_000);

interface Kind {
  name: string;
  mode: 'all' | 'split';
  options: StartOptions;
}

const KINDS: Kind[] = [
  { name: 'all-in-one SQLite', mode: 'all', options: {} },
  { name: 'all-in-one PostgreSQL, 2 replicas (LISTEN/NOTIFY)', mode: 'all', options: { database: 'postgres', replicas: 2 } },
  { name: 'all-in-one PostgreSQL + Redis, 2 replicas (pub/sub)', mode: 'all', options: { database: 'postgres', redis: true, replicas: 2 } },
  { name: 'split, 2 authn + 2 authz (PostgreSQL, Redis, NATS)', mode: 'split', options: { authnReplicas: 2, authzReplicas: 2 } },
];

/** One place a request can land: its label and how to ask it each question. */
interface Replica {
  label: string;
  /** authn: profile, validate_jwt_token, validate_session */
  authn(call: Call): Promise<Result>;
  /** authz: check_permissions or an admin call */
  authz(call: AuthzCall): Promise<Result>;
}

/** A normalised answer: ok, or the error's code and message. */
const outcome = (r: Result): unknown => (r.ok ? 'ok' : { code: r.code, message: r.message });

for (const cut of [false, true]) {
  for (const kind of KINDS) {
    describe(`${kind.name}${cut ? ', notifications cut (polling)' : ''}`, () => {
      let d: Deployment;
      let sink: SmtpSink;
      let replicas: Replica[];
      const admin = { adminSecret: '' };

      beforeAll(async () => {
        sink = await startSmtpSink();
        d = await startDeployment(kind.mode, {
          ...kind.options,
          readyTimeoutMs: 90_000,
          flags: [
            `--smtp-host=${sink.host}`, `--smtp-port=${sink.port}`, '--smtp-sender-email=noreply@gatehouse.test', '--roles=user,editor',
            ...(cut ? ['--test-notifications-off'] : []),
          ],
        });
        admin.adminSecret = d.adminSecret;
        const viaUrl = (url: string, label: string): Replica => {
          const t: Target = { url, grpcAddress: d.grpcAddress };
          return { label, authn: (call) => rest(t, call), authz: (call) => authzRest(t, call) };
        };
        replicas = d.mode === 'all'
          ? d.replicaUrls.map((u, i) => viaUrl(u, `all#${i}`))
          : [
            viaUrl(d.url, 'gateway'),
            ...d.authnGrpcAddresses.map((a, i): Replica => ({
              label: `authn#${i}`,
              authn: (call) => grpc({ url: d.url, grpcAddress: a }, call),
              authz: (call) => authzGrpc(d, call, d.authzGrpcAddresses[i % d.authzGrpcAddresses.length]!),
            })),
            ...d.authzGrpcAddresses.map((a, i): Replica => ({
              label: `authz#${i}`,
              authn: (call) => grpc({ url: d.url, grpcAddress: d.authnGrpcAddresses[(i + 1) % d.authnGrpcAddresses.length]! }, call),
              authz: (call) => authzGrpc(d, call, a),
            })),
          ];
        okBody(await replicas[0]!.authz({ op: '_fga_write_model', args: { dsl: DOCS_MODEL }, creds: admin }));
      }, 240_000);
      afterAll(async () => {
        closeGrpcClients();
        closeAuthzClients();
        await d?.stop();
        await sink?.close();
      });

      it('runs the replicas it names', () => {
        const expected = kind.options.replicas ?? 1;
        if (kind.mode === 'all') expect(d.replicaUrls).toHaveLength(expected);
        else expect([d.authnGrpcAddresses.length, d.authzGrpcAddresses.length]).toEqual([2, 2]);
      });

      /** Waits out the polling interval when notifications are cut; nothing otherwise (the next request). */
      const settle = async (): Promise<void> => {
        if (cut) await sleep(INVALIDATION_POLL_MS + 250);
      };

      type User = { id: string; email: string; token: string; cookie: string; subject: string };
      async function login(email: string): Promise<{ token: string; cookie: string }> {
        const r = await replicas[0]!.authn({ op: 'login', args: { email, password: PASSWORD } });
        return { token: expectOk(r).access_token as string, cookie: sessionCookie(r) };
      }
      async function signup(label: string): Promise<User> {
        const email = freshEmail(label);
        const r = expectOk(await replicas[0]!.authn({ op: 'signup', args: { email, password: PASSWORD, confirm_password: PASSWORD } }));
        const id = r.user.id as string;
        return { id, email, subject: `user:${id}`, ...(await login(email)) };
      }

      /** Every answer a credential gets, on every replica: `ok`, or the refusal. */
      async function answers(c: { token: string; cookie: string }): Promise<Record<string, unknown>> {
        const out: Record<string, unknown> = {};
        for (const r of replicas) {
          for (const creds of [{ bearer: c.token }, { cookie: c.cookie }] as Credentials[]) {
            out[`${r.label} profile ${creds.bearer ? 'bearer' : 'cookie'}`] = outcome(await r.authn({ op: 'profile', creds }));
          }
          out[`${r.label} validate_jwt_token`] = outcome(await r.authn({ op: 'validate_jwt_token', args: { token_type: 'access_token', token: c.token } }));
          out[`${r.label} validate_session`] = outcome(await r.authn({ op: 'validate_session', args: { cookie: c.cookie.split('=')[1] } }));
          out[`${r.label} check_permissions`] = outcome(await r.authz({ op: 'check_permissions', args: { checks: [{ relation: 'viewer', object: 'doc:cache' }] }, creds: { bearer: c.token } }));
        }
        return out;
      }
      /** Uses the credential three times on every replica (so every cache holds it) and expects it to work. */
      async function warm(c: { token: string; cookie: string }): Promise<void> {
        for (let i = 0; i < 2; i++) await answers(c);
        const got = await answers(c);
        expect(got).toEqual(Object.fromEntries(Object.keys(got).map((k) => [k, 'ok'])));
      }
      /** Every replica refuses the credential (after the polling interval when notifications are cut). */
      async function expectRefusedEverywhere(c: { token: string; cookie: string }): Promise<void> {
        await settle();
        const got = await answers(c);
        for (const [k, v] of Object.entries(got)) {
          expect({ [k]: v }).toEqual({ [k]: expect.objectContaining({ code: 'unauthenticated' }) });
        }
      }

      it('logout: the token and cookie are refused on every replica', async () => {
        const u = await signup('inv-logout');
        await warm(u);
        expectOk(await replicas[0]!.authn({ op: 'logout', creds: { cookie: u.cookie } }));
        await expectRefusedEverywhere(u);
      });

      it('revoke (admin revoke_access): every session of the user is refused on every replica', async () => {
        const u = await signup('inv-revoke');
        const other = await login(u.email);
        await warm(u);
        await warm(other);
        const r = await postJson(`${d.url}/v1/admin/revoke_access`, { user_id: u.id }, { 'x-service-admin-secret': d.adminSecret, origin: d.url });
        expect(r.status).toBe(200);
        await expectRefusedEverywhere(u);
        await expectRefusedEverywhere(other);
      });

      it('password reset: every session of the user is refused on every replica', async () => {
        const u = await signup('inv-reset');
        await warm(u);
        expect((await postJson(`${d.url}/v1/forgot_password`, { email: u.email }, { origin: d.url })).status).toBe(200);
        const token = sink.tokenLink(await sink.waitForMail(u.email, { timeoutMs: 30_000 })).searchParams.get('token');
        const NEW = 'Correct-Horse-11';
        const reset = await postJson(`${d.url}/v1/reset_password`, { token, password: NEW, confirm_password: NEW }, { origin: d.url });
        expect(reset.status).toBe(200);
        await expectRefusedEverywhere(u);
      });

      it('role change (admin update_user roles): the old sessions are refused on every replica', async () => {
        const u = await signup('inv-roles');
        await warm(u);
        const r = await postJson(`${d.url}/v1/admin/update_user`, { id: u.id, roles: ['user', 'editor'] }, { 'x-service-admin-secret': d.adminSecret, origin: d.url });
        expect(r.status).toBe(200);
        await expectRefusedEverywhere(u);
        // a new login carries the new roles everywhere
        const again = await login(u.email);
        await warm(again);
        for (const rep of replicas) expect(expectOk(await rep.authn({ op: 'profile', creds: { bearer: again.token } })).roles).toContain('editor');
      });

      it('deactivation (deactivate_account): every session is refused on every replica', async () => {
        const u = await signup('inv-deactivate');
        const other = await login(u.email);
        await warm(u);
        await warm(other);
        expectOk(await replicas[0]!.authn({ op: 'deactivate_account', creds: { bearer: u.token } }));
        await expectRefusedEverywhere(u);
        await expectRefusedEverywhere(other);
      });

      it('deletion (admin delete_user): the user\'s sessions are refused on every replica', async () => {
        const u = await signup('inv-delete');
        await warm(u);
        const r = await postJson(`${d.url}/v1/admin/delete_user`, { id: u.id }, { 'x-service-admin-secret': d.adminSecret, origin: d.url });
        expect(r.status).toBe(200);
        await expectRefusedEverywhere(u);
      });

      it('a tuple written or deleted through one replica is the answer of every replica next', async () => {
        const u = await signup('inv-tuples');
        await warm(u);
        const allowed = async (object: string): Promise<Record<string, boolean>> => {
          const out: Record<string, boolean> = {};
          for (const rep of replicas) {
            const r = await rep.authz({ op: 'check_permissions', args: { checks: [{ relation: 'viewer', object }] }, creds: { bearer: u.token } });
            out[rep.label] = okBody(r).results[0].allowed as boolean;
          }
          return out;
        };
        const all = (v: boolean): Record<string, boolean> => Object.fromEntries(replicas.map((r) => [r.label, v]));
        for (let i = 0; i < 3; i++) {
          const writer = replicas[i % replicas.length]!;
          const object = `doc:inv-${i}`;
          const tuple = { user: u.subject, relation: 'viewer', object };
          expect(await allowed(object)).toEqual(all(false));
          okBody(await writer.authz({ op: '_fga_write_tuples', args: { tuples: [tuple] }, creds: admin }));
          await settle();
          expect({ i, after: 'write', got: await allowed(object) }).toEqual({ i, after: 'write', got: all(true) });
          okBody(await writer.authz({ op: '_fga_delete_tuples', args: { tuples: [tuple] }, creds: admin }));
          await settle();
          expect({ i, after: 'delete', got: await allowed(object) }).toEqual({ i, after: 'delete', got: all(false) });
        }
      });
    });
  }
}
