/**
 * @module test/e2e/admin-users
 * The super-admin's user operations (behaviour.md §5.3, §10, §2.2), in both modes: search and
 * pagination compared on REST, GraphQL and gRPC; update_user with each 409 and the roles check;
 * revoke → the user's token and cookie refused at once → enable; revoke_user_sessions (issue 35) on
 * REST, GraphQL and gRPC: signed out everywhere, access kept; invites through the SMTP sink,
 * redeemed; bad input on every route (never a 5xx); and delete_user, after which no row of any
 * service's tables and no relationship tuple names the user, checked in the stores themselves. In
 * split mode authz and mfa are stopped during the delete and started again: their durable consumers
 * of `user.deleted` remove the tuples and the MFA data when they are back.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { Redis } from 'ioredis';
import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
import { MACHINE, startDeployment, startSmtpSink, type Deployment, type SmtpSink } from '@gatehouse/testing';
import { gql, postJson, raw } from '../support/http.ts';
import { until } from '../support/until.ts';
import { openSql } from '../support/sql.ts';

const PASSWORD = 'Str0ng!pass';
const NEW_PASSWORD = 'N3w!passw0rd';
const MODEL = `model
  schema 1.1
type user
  relations
    define friend: [user]
type doc
  relations
    define owner: [user]
`;

/**
 * Tables whose rows are records of what happened, not the user's data: the outboxes (the
 * `user.deleted` event itself), delivery records of mails already sent, the audit log, and the
 * engine's change log (a history of tuple writes and deletes, not tuples).
 */
const HISTORY = /outbox|notification|audit|migrations|^fga_changes$/;

/** Every row of every table of the deployment's main database, by table. */
async function allRows(d: Deployment): Promise<Record<string, Array<Record<string, unknown>>>> {
  const out: Record<string, Array<Record<string, unknown>>> = {};
  if (d.databaseType === 'sqlite') {
    const db = new BetterSqlite3(d.databaseUrl, { readonly: true });
    try {
      // the typings of `Statement` lack `all` for statements without bound parameters: go through `unknown`
      const all = (sql: string): unknown[] => (db.prepare(sql) as unknown as { all(): unknown[] }).all();
      for (const { name } of all("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'") as Array<{ name: string }>) {
        out[name] = all(`select * from "${name}"`) as Array<Record<string, unknown>>;
      }
    } finally {
      db.close();
    }
    return out;
  }
  const sql = await openSql(d.databaseUrl);
  try {
    const tables = await sql.query<{ table_name: string }>("select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'");
    for (const { table_name: name } of tables) out[name] = await sql.query(`select * from "${name}"`);
  } finally {
    await sql.close();
  }
  return out;
}

/** `table: row` for each row (outside {@link HISTORY}) holding one of `needles` anywhere. */
async function rowsNaming(d: Deployment, needles: readonly string[]): Promise<string[]> {
  const hits: string[] = [];
  for (const [table, rows] of Object.entries(await allRows(d))) {
    if (HISTORY.test(table)) continue;
    for (const row of rows) {
      const text = JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      if (needles.some((n) => text.includes(n))) hits.push(`${table}: ${text}`);
    }
  }
  return hits;
}

describe.each(['all', 'split'] as const)('admin user operations (%s)', (mode) => {
  let d: Deployment;
  let sink: SmtpSink;
  const tag = `${mode}${Date.now().toString(36)}`;
  const admin = () => ({ origin: d.url, 'x-service-admin-secret': d.adminSecret });
  const post = (path: string, body: unknown, headers: Record<string, string> = admin()) => postJson(`${d.url}/v1/${path}`, body, headers);
  /** With MFA on (so mfa holds data to delete), a first step answers the setup offer: skip it for tokens (§4.3). */
  const pastOffer = async (r: Awaited<ReturnType<typeof postJson>>) => {
    if (r.status !== 200 || r.body.access_token) return r;
    expect(r.body.message).toBe('Proceed to mfa setup');
    const mfa = r.headers.getSetCookie().find((c) => c.startsWith('mfa='))!.split(';')[0]!;
    return post('skip_mfa_setup', {}, { origin: d.url, cookie: mfa });
  };
  const login = async (email: string, password: string) => pastOffer(await post('login', { email, password }, { origin: d.url }));
  const signup = async (local: string, more: Record<string, unknown> = {}) => {
    const r = await pastOffer(await post('signup', { email: `${local}-${tag}@example.com`, password: PASSWORD, confirm_password: PASSWORD, ...more }, { origin: d.url }));
    expect(r.status).toBe(200);
    return { user: r.body.user as { id: string; email: string }, token: r.body.access_token as string, cookie: r.headers.getSetCookie().find((c) => c.startsWith('cookie_session='))!.split(';')[0]! };
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    d = await startDeployment(mode, {
      mfa: true,
      flags: [`--smtp-host=${sink.host}`, `--smtp-port=${sink.port}`, '--smtp-sender-email=noreply@gatehouse.test', '--skip-tls-verification', '--roles=user,editor', '--protected-roles=owner'],
      readyTimeoutMs: 60_000,
    });
  }, 120_000);
  afterAll(async () => {
    await d?.stop();
    await sink?.close();
  });

  it('users: substring search, newest first, pagination with total and a past-the-end page; the same on REST, GraphQL and gRPC', async () => {
    const made = [];
    for (const [local, given] of [['ann', 'Annabel'], ['bob', 'Robert'], ['cyd', 'Cydney']] as const) {
      made.push((await signup(`search-${local}`, { given_name: given })).user);
      await new Promise((r) => setTimeout(r, 1100)); // distinct created_at seconds
    }
    const rest = await post('admin/users', { query: `-${tag}@`, pagination: { limit: 2 } });
    expect(rest.status).toBe(200);
    expect(rest.body.pagination).toEqual({ page: 1, limit: 2, offset: 0, total: 3 });
    expect(rest.body.users.map((u: { id: string }) => u.id)).toEqual([made[2]!.id, made[1]!.id]);
    const page2 = await post('admin/users', { query: `-${tag}@`, pagination: { page: '2', limit: 2 } });
    expect(page2.body.users.map((u: { id: string }) => u.id)).toEqual([made[0]!.id]);
    expect((await post('admin/users', { query: `-${tag}@`, pagination: { page: 9, limit: 2 } })).body).toEqual({ users: [], pagination: { page: 9, limit: 2, offset: 16, total: 3 } });
    const byName = await post('admin/users', { query: 'ROBERT' });
    expect(byName.body.users.map((u: { id: string }) => u.id)).toContain(made[1]!.id);
    expect(byName.body.users.every((u: { given_name: string | null }) => /robert/i.test(u.given_name ?? ''))).toBe(true);

    const g = await gql(d.url, 'query($p: ListUsersRequest) { _users(params: $p) { pagination { page limit offset total } users { id email given_name roles created_at } } }',
      { p: { query: `-${tag}@`, pagination: { limit: 2 } } }, admin());
    expect(g.body.data._users).toEqual({
      pagination: rest.body.pagination,
      users: rest.body.users.map((u: Record<string, unknown>) => ({ id: u.id, email: u.email, given_name: u.given_name, roles: u.roles, created_at: u.created_at })),
    });
    const grpc = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      const viaGrpc = await grpc.call('Users', { query: `-${tag}@`, pagination: { limit: 2 } }, createCallContext({ protocol: 'grpc', headers: { 'x-service-admin-secret': d.adminSecret } }));
      expect(viaGrpc).toEqual(rest.body);
    } finally {
      grpc.close();
    }
    const byEmail = await post('admin/user', { email: made[0]!.email.toUpperCase() });
    expect(byEmail.body).toEqual((await post('admin/user', { id: made[0]!.id })).body);
    expect(byEmail.body).toMatchObject({ id: made[0]!.id, email: made[0]!.email, given_name: 'Annabel' });
  });

  it('update_user: each 409, the roles check, and the user signed out by an email, phone or role change', async () => {
    const a = await signup('upd-a');
    const b = await signup('upd-b');
    expect((await post('admin/update_user', { id: b.user.id, phone_number: '+4915100000001' })).status).toBe(200);
    const dupEmail = await post('admin/update_user', { id: a.user.id, email: b.user.email.toUpperCase() });
    expect({ status: dupEmail.status, body: dupEmail.body }).toEqual({ status: 409, body: { code: 'already_exists', message: 'user with given email already exists' } });
    const dupPhone = await post('admin/update_user', { id: a.user.id, phone_number: ' +4915100000001 ' });
    expect({ status: dupPhone.status, body: dupPhone.body }).toEqual({ status: 409, body: { code: 'already_exists', message: 'user with given phone number already exists' } });
    const badRole = await post('admin/update_user', { id: a.user.id, roles: ['user', 'root'] });
    expect({ status: badRole.status, body: badRole.body }).toEqual({ status: 400, body: { code: 'invalid_argument', message: 'invalid list of roles' } });
    // refused updates changed nothing: still signed in
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${a.token}` } })).status).toBe(200);
    // a name change keeps the sessions
    const named = await post('admin/update_user', { id: a.user.id, nickname: 'Nick' });
    expect(named.body).toMatchObject({ id: a.user.id, nickname: 'Nick' });
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${a.token}` } })).status).toBe(200);
    // a protected role is a valid admin choice; the role change ends every session at once
    const roles = await post('admin/update_user', { id: a.user.id, roles: ['user', 'owner'] });
    expect(roles.body.roles).toEqual(['user', 'owner']);
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${a.token}` } })).status).toBe(401);
    expect((await raw(`${d.url}/v1/profile`, { headers: { cookie: a.cookie } })).status).toBe(401);
    const g = await gql(d.url, 'mutation($p: UpdateUserRequest!) { _update_user(params: $p) { id email email_verified } }', { p: { id: a.user.id, email: `moved-${tag}@example.com`, email_verified: true } }, admin());
    expect(g.body.data._update_user).toEqual({ id: a.user.id, email: `moved-${tag}@example.com`, email_verified: true });
  });

  it('revoke_access refuses the user\'s token and cookie at once; enable_access lets them sign in again; both idempotent', async () => {
    const u = await signup('revoke');
    const revoked = await post('admin/revoke_access', { user_id: u.user.id });
    expect({ status: revoked.status, body: revoked.body }).toEqual({ status: 200, body: { message: 'user access revoked successfully' } });
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${u.token}` } })).status).toBe(401);
    expect((await raw(`${d.url}/v1/profile`, { headers: { cookie: u.cookie } })).status).toBe(401);
    expect((await post('admin/revoke_access', { user_id: u.user.id })).body).toEqual({ message: 'user access revoked successfully' });
    expect((await post('admin/user', { id: u.user.id })).body.revoked_timestamp).toEqual(expect.any(Number));
    const refused = await post('login', { email: u.user.email, password: PASSWORD }, { origin: d.url });
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 401, body: { code: 'unauthenticated', message: 'invalid credentials' } });
    const g = await gql(d.url, 'mutation($p: UpdateAccessRequest!) { _enable_access(param: $p) { message } }', { p: { user_id: u.user.id } }, admin());
    expect(g.body).toEqual({ data: { _enable_access: { message: 'user access enabled successfully' } } });
    expect((await post('admin/enable_access', { user_id: u.user.id })).body).toEqual({ message: 'user access enabled successfully' });
    const again = await login(u.user.email, PASSWORD);
    expect(again.status).toBe(200);
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${again.body.access_token}` } })).status).toBe(200);
  });

  it('revoke_user_sessions signs the user out everywhere on REST, GraphQL and gRPC, keeping access (issue 35)', async () => {
    const u = await signup('signout');
    const second = await login(u.user.email, PASSWORD);
    const other = await signup('signout-other');
    const profile = async (headers: Record<string, string>) => (await raw(`${d.url}/v1/profile`, { headers })).status;
    const rest = await post('admin/revoke_user_sessions', { user_id: u.user.id });
    expect({ status: rest.status, body: rest.body }).toEqual({ status: 200, body: { message: 'User sessions revoked', count: 2 } });
    const signedIn: Array<Record<string, string>> = [{ authorization: `Bearer ${u.token}` }, { cookie: u.cookie }, { authorization: `Bearer ${second.body.access_token}` }];
    for (const h of signedIn) expect(await profile(h)).toBe(401);
    expect(await profile({ authorization: `Bearer ${other.token}` })).toBe(200);
    // not revoke_access: the account is as it was and the user signs in again at once
    expect((await post('admin/user', { id: u.user.id })).body.revoked_timestamp).toBeNull();
    const again = await login(u.user.email, PASSWORD);
    expect(again.status).toBe(200);
    expect(await profile({ authorization: `Bearer ${again.body.access_token}` })).toBe(200);
    const g = await gql(d.url, 'mutation($p: RevokeUserSessionsRequest!) { _revoke_user_sessions(params: $p) { message count } }', { p: { user_id: u.user.id } }, admin());
    expect(g.body).toEqual({ data: { _revoke_user_sessions: { message: 'User sessions revoked', count: 1 } } });
    expect(await profile({ authorization: `Bearer ${again.body.access_token}` })).toBe(401);
    const grpc = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      const viaGrpc = await grpc.call('RevokeUserSessions', { user_id: u.user.id }, createCallContext({ protocol: 'grpc', headers: { 'x-service-admin-secret': d.adminSecret } }));
      expect(viaGrpc).toEqual({ message: 'User sessions revoked', count: 0 });
    } finally {
      grpc.close();
    }
    expect(await profile({ authorization: `Bearer ${other.token}` })).toBe(200);
  });

  it('invite_members mails a set-password link through the SMTP sink; reset_password redeems it', async () => {
    const existing = await signup('inv-existing');
    const fresh = `invitee-${tag}@example.com`;
    const res = await post('admin/invite_members', { emails: [existing.user.email, fresh.toUpperCase(), 'not-an-email'] });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('1 user(s) invited successfully.');
    expect(res.body.users).toEqual([expect.objectContaining({ email: fresh, email_verified: false })]);
    const mail = await sink.waitForMail(fresh);
    const link = sink.tokenLink(mail);
    expect(`${link.origin}${link.pathname}`).toBe(`${d.url}/app/setup-password`);
    const listed = await post('admin/verification_requests', { limit: 1000 });
    const mine = listed.body.verification_requests.find((v: { email: string }) => v.email === fresh);
    expect(mine).toMatchObject({ identifier: 'invite_member', token: null, nonce: null });
    expect(listed.body.pagination.total).toBeGreaterThanOrEqual(1);
    const redeemed = await post('reset_password', { token: link.searchParams.get('token'), password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }, { origin: d.url });
    expect({ status: redeemed.status, body: redeemed.body }).toEqual({ status: 200, body: { message: 'Password updated successfully.' } });
    const signedIn = await login(fresh, NEW_PASSWORD);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user).toMatchObject({ email: fresh, email_verified: true });
    const all = await post('admin/invite_members', { emails: [fresh] });
    expect({ status: all.status, body: all.body }).toEqual({ status: 409, body: { code: 'already_exists', message: 'all emails already exist' } });
  });

  it('bad input on every route answers the §5 errors, never a 5xx', async () => {
    const long = 'x'.repeat(5000);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[string, unknown, number, string | null]> = [
      ['admin/users', { pagination: { limit: 'abc' } }, 400, null],
      ['admin/users', { pagination: { limit: 1001 } }, 400, 'limit must be between 1 and 1000'],
      ['admin/users', { pagination: { page: -1 } }, 400, 'page must be at least 1'],
      ['admin/users', { query: long }, 400, 'query must be at most 256 characters'],
      ['admin/users', { query: 7 }, 400, null],
      ['admin/user', {}, 400, 'either id or email is required'],
      ['admin/user', { id: ' ', email: '' }, 400, 'either id or email is required'],
      ['admin/user', { id: unknown, email: 'a@example.com' }, 400, 'provide either id or email, not both'],
      ['admin/user', { id: unknown }, 404, 'user not found'],
      ['admin/user', { id: long }, 400, 'id must be at most 64 characters'],
      ['admin/user', { email: ['x'] }, 400, null],
      ['admin/update_user', {}, 400, 'user ID is missing'],
      ['admin/update_user', { id: unknown, nickname: 'n' }, 404, 'user not found'],
      ['admin/update_user', { id: unknown, nickname: long }, 400, 'nickname must be at most 256 characters'],
      ['admin/update_user', { id: unknown, email: 'not-an-email' }, 400, 'invalid email address'],
      ['admin/update_user', { id: unknown, phone_number: '12' }, 400, 'invalid phone number'],
      ['admin/update_user', { id: unknown, roles: 'user' }, 400, null],
      ['admin/update_user', { id: unknown, app_data: 'x' }, 400, null],
      ['admin/delete_user', {}, 400, 'either id or email is required'],
      ['admin/delete_user', { email: `nobody-${tag}@example.com` }, 404, 'user not found'],
      ['admin/delete_user', { id: { a: 1 } }, 400, null],
      ['admin/verification_requests', { page: -3 }, 400, 'page must be at least 1'],
      ['admin/verification_requests', { limit: 'many' }, 400, null],
      ['admin/revoke_access', { user_id: '' }, 400, 'user ID is missing'],
      ['admin/revoke_access', { user_id: unknown }, 404, 'user not found'],
      ['admin/revoke_access', { user_id: long }, 400, 'user_id must be at most 64 characters'],
      ['admin/enable_access', {}, 400, 'user ID is missing'],
      ['admin/revoke_user_sessions', {}, 400, 'user ID is missing'],
      ['admin/revoke_user_sessions', { user_id: unknown }, 404, 'user not found'],
      ['admin/revoke_user_sessions', { user_id: long }, 400, 'user_id must be at most 64 characters'],
      ['admin/enable_access', { user_id: [1] }, 400, null],
      ['admin/invite_members', { emails: [] }, 400, 'no valid emails found'],
      ['admin/invite_members', { emails: 'a@example.com' }, 400, null],
      ['admin/invite_members', { emails: Array.from({ length: 101 }, (_, i) => `m${i}@example.com`) }, 400, 'cannot invite more than 100 members in a single request'],
      ['admin/invite_members', { emails: [`r-${tag}@example.com`], redirect_uri: 'javascript:alert(1)' }, 400, 'invalid redirect URI'],
      ['admin/login', { admin_secret: long }, 401, 'invalid admin secret'],
    ];
    for (const [path, body, status, message] of cases) {
      const res = await post(path, body, path === 'admin/login' ? { origin: d.url, 'x-forwarded-for': '10.99.0.1' } : admin());
      const want = { path, body: JSON.stringify(body).slice(0, 80), status, code: { 400: 'invalid_argument', 401: 'unauthenticated', 404: 'not_found' }[status as 400 | 401 | 404] };
      expect({ path, body: JSON.stringify(body).slice(0, 80), status: res.status, code: res.body.code }).toEqual(want);
      if (message) expect(res.body.message).toBe(message);
      else expect(typeof res.body.message).toBe('string');
    }
  });

  it('bad input answers the same code and message on GraphQL and gRPC as on REST', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const cases: Array<{ rpc: string; path: string; field: string; arg: string; type: string; req: Record<string, unknown>; select: string }> = [
      { rpc: 'User', path: 'admin/user', field: '_user', arg: 'params', type: 'GetUserRequest!', req: {}, select: '{ id }' },
      { rpc: 'User', path: 'admin/user', field: '_user', arg: 'params', type: 'GetUserRequest!', req: { id: unknown }, select: '{ id }' },
      { rpc: 'Users', path: 'admin/users', field: '_users', arg: 'params', type: 'ListUsersRequest', req: { pagination: { limit: 1001 } }, select: '{ pagination { total } }' },
      { rpc: 'RevokeAccess', path: 'admin/revoke_access', field: '_revoke_access', arg: 'param', type: 'UpdateAccessRequest!', req: { user_id: '' }, select: '{ message }' },
      { rpc: 'RevokeUserSessions', path: 'admin/revoke_user_sessions', field: '_revoke_user_sessions', arg: 'params', type: 'RevokeUserSessionsRequest!', req: { user_id: unknown }, select: '{ count }' },
      { rpc: 'DeleteUser', path: 'admin/delete_user', field: '_delete_user', arg: 'params', type: 'DeleteUserRequest!', req: { id: unknown }, select: '{ message }' },
      { rpc: 'UpdateUser', path: 'admin/update_user', field: '_update_user', arg: 'params', type: 'UpdateUserRequest!', req: { id: unknown, roles: ['root'] }, select: '{ id }' },
      { rpc: 'InviteMembers', path: 'admin/invite_members', field: '_invite_members', arg: 'params', type: 'InviteMemberRequest!', req: { emails: ['nope'] }, select: '{ message }' },
    ];
    const grpc = createGrpcClient(serviceDescriptor('authn'), { address: d.grpcAddress });
    try {
      for (const c of cases) {
        const rest = await post(c.path, c.req);
        const g = await gql(d.url, `${c.rpc === 'User' || c.rpc === 'Users' ? 'query' : 'mutation'}($p: ${c.type}) { ${c.field}(${c.arg}: $p) ${c.select} }`, { p: c.req }, admin());
        const viaGrpc = await grpc.call(c.rpc, c.req, createCallContext({ protocol: 'grpc', headers: { 'x-service-admin-secret': d.adminSecret } })).then(() => null, (e: { code: string; message: string }) => e);
        expect({ rpc: c.rpc, graphql: [g.body.errors?.[0]?.extensions?.code, g.body.errors?.[0]?.message], grpc: [viaGrpc?.code, viaGrpc?.message] })
          .toEqual({ rpc: c.rpc, graphql: [rest.body.code.toUpperCase(), rest.body.message], grpc: [rest.body.code, rest.body.message] });
        expect(rest.status).toBeLessThan(500);
      }
    } finally {
      grpc.close();
    }
  });

  it(`delete_user leaves no row naming the user in any service's tables and no tuple naming user:<id>${mode === 'split' ? ', with authz and mfa stopped during the delete' : ''}`, async () => {
    const u = await signup('del');
    const other = await signup('del-other');
    const { id } = u.user;
    expect((await post('admin/fga/model', { dsl: MODEL })).status).toBe(200);
    const tuples = [
      { user: `user:${id}`, relation: 'owner', object: `doc:d-${tag}` },
      { user: `user:${other.user.id}`, relation: 'friend', object: `user:${id}` },
      { user: `user:${id}`, relation: 'friend', object: `user:${other.user.id}` },
      { user: `user:${other.user.id}`, relation: 'owner', object: `doc:keep-${tag}` },
    ];
    expect((await post('admin/fga/tuples', { tuples })).status).toBe(200);
    expect((await post('forgot_password', { email: u.user.email }, { origin: d.url })).status).toBe(200);
    await sink.waitForMail(u.user.email);
    // mfa's part: a pending TOTP enrolment (secret and recovery codes) and its MFA session
    const totp = await post('totp_mfa_setup', {}, { origin: d.url, authorization: `Bearer ${u.token}` });
    expect(totp.status).toBe(200);
    const before = await rowsNaming(d, [id, u.user.email]);
    expect(before.some((r) => r.startsWith('authn_users'))).toBe(true);
    expect(before.some((r) => r.startsWith('authn_verification_requests'))).toBe(true);
    expect(before.some((r) => r.startsWith('mfa_totp'))).toBe(true);
    expect(before.filter((r) => r.startsWith('fga_tuples'))).toHaveLength(3);

    if (mode === 'split') {
      await d.stopProcess('authz');
      await d.stopProcess('mfa');
    }
    const del = await post('admin/delete_user', { email: u.user.email });
    expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: { message: 'user deleted successfully' } });
    expect((await raw(`${d.url}/v1/profile`, { headers: { authorization: `Bearer ${u.token}` } })).status).toBe(401);
    expect((await post('admin/user', { id })).status).toBe(404);
    if (mode === 'split') {
      // authz and mfa are down: their parts wait for them; authn's part is already gone
      const during = await rowsNaming(d, [id, u.user.email]);
      expect(during.filter((r) => !r.startsWith('fga_') && !r.startsWith('mfa_'))).toEqual([]);
      expect(during.filter((r) => r.startsWith('fga_tuples'))).toHaveLength(3);
      expect(during.some((r) => r.startsWith('mfa_totp'))).toBe(true);
      await d.startProcess('mfa');
      await d.startProcess('authz');
    }
    const left = await until('the deleted user\'s rows and tuples to go', () => rowsNaming(d, [id, u.user.email]), (rows) => rows.length === 0);
    expect(left).toEqual([]);
    // the other user's tuple stays
    expect((await rowsNaming(d, [`keep-${tag}`])).filter((r) => r.startsWith('fga_tuples'))).toHaveLength(1);
    if (mode === 'split') {
      const redis = new Redis(MACHINE.redisUrl);
      try {
        expect(await redis.smembers(`gatehouse:user_sessions:${id}`)).toEqual([]);
      } finally {
        redis.disconnect();
      }
    }
  });
});
