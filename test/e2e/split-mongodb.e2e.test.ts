/**
 * @module test/e2e/split-mongodb
 * Split mode on MongoDB (issue 32 §4): every service process (authn, mfa, admin, orgs, authz,
 * notifications) on one MongoDB server (FerretDB v1, no transactions: the single-document outbox),
 * NATS between them, the gateway in front. A user's life through the gateway (signup, login, profile,
 * update_profile), 20 concurrent signups of one address (one account, the others the contract's 400),
 * relationship tuples and a check (the engine's store in memory: it has none on MongoDB), and
 * delete_user, whose `user.deleted` travels from authn's outbox over NATS to authz, which removes the
 * user's tuples.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { COMMAND_NAMES } from '@gatehouse/contracts/service-names';
import { startDeployment, type Deployment } from '@gatehouse/testing';
import { postJson, raw } from '../support/http.ts';
import { until } from '../support/until.ts';

const PASSWORD = 'Str0ng!pass';
const MODEL = `model
  schema 1.1
type user
type doc
  relations
    define owner: [user]
`;

describe('split mode on MongoDB (FerretDB)', () => {
  let d: Deployment;
  const tag = Date.now().toString(36);
  const admin = () => ({ origin: d.url, 'x-service-admin-secret': d.adminSecret });
  const post = (path: string, body: unknown, headers: Record<string, string> = { origin: d.url }) => postJson(`${d.url}/v1/${path}`, body, headers);

  beforeAll(async () => {
    // the engine has no MongoDB store (it is off over MongoDB unless --fga-store names one): its own, in memory
    d = await startDeployment('split', { database: 'mongodb', flags: ['--fga-store=memory'], readyTimeoutMs: 90_000 });
  }, 240_000);
  afterAll(async () => {
    await d?.stop();
  });

  it('runs every service on MongoDB', () => {
    expect(d.databaseType).toBe('mongodb');
    expect(d.processes.map((p) => p.command).sort()).toEqual(COMMAND_NAMES.filter((c) => c !== 'all').sort());
  });

  it('signs up, logs in, reads and updates the profile', async () => {
    const email = `ada-${tag}@example.com`;
    const s = await post('signup', { email, password: PASSWORD, confirm_password: PASSWORD, given_name: 'Ada' });
    expect(s.status).toBe(200);
    const login = await post('login', { email, password: PASSWORD });
    expect(login.status).toBe(200);
    const auth = { origin: d.url, authorization: `Bearer ${login.body.access_token}` };
    expect((await raw(`${d.url}/v1/profile`, { headers: auth })).body).toMatchObject({ email, given_name: 'Ada', created_at: expect.any(Number) });
    expect((await post('update_profile', { given_name: 'Augusta' }, auth)).status).toBe(200);
    const again = await post('login', { email, password: PASSWORD });
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${again.body.access_token}` } })).body).toMatchObject({ given_name: 'Augusta' });
  });

  it('20 concurrent signups with one email through the gateway give exactly one account', async () => {
    const email = `race-${tag}@example.com`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('signup', { email, password: PASSWORD, confirm_password: PASSWORD })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 200).map((a) => ({ status: a.status, body: a.body })))
      .toEqual(Array(19).fill({ status: 400, body: { code: 'invalid_argument', message: 'user with given email already exists' } }));
    const listed = await post('admin/users', { query: `race-${tag}@` }, admin());
    expect(listed.body.pagination.total).toBe(1);
  });

  it('delete_user: user.deleted goes from authn\'s outbox over NATS to authz, which removes the user\'s tuples', async () => {
    const s = await post('signup', { email: `del-${tag}@example.com`, password: PASSWORD, confirm_password: PASSWORD });
    const id = s.body.user.id as string;
    expect((await post('admin/fga/model', { dsl: MODEL }, admin())).status).toBe(200);
    expect((await post('admin/fga/tuples', { tuples: [{ user: `user:${id}`, relation: 'owner', object: `doc:d-${tag}` }] }, admin())).status).toBe(200);
    const check = () => post('check_permissions', { user: `user:${id}`, checks: [{ relation: 'owner', object: `doc:d-${tag}` }] }, admin());
    expect((await check()).body.results[0].allowed).toBe(true);
    const del = await post('admin/delete_user', { id }, admin());
    expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: { message: 'user deleted successfully' } });
    expect((await post('admin/user', { id }, admin())).status).toBe(404);
    const after = await until('authz to remove the deleted user\'s tuple', check, (r) => r.status === 200 && r.body.results[0].allowed === false);
    expect(after.body.results[0].allowed).toBe(false);
    // the address is free again
    expect((await post('signup', { email: `del-${tag}@example.com`, password: PASSWORD, confirm_password: PASSWORD })).status).toBe(200);
  });
});
