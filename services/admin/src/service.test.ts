import { describe, expect, it } from '@jest/globals';
import { createAuthenticator, createMemoryAdminAccessStore, createMemorySessionStore } from '@gatehouse/auth';
import type { BusEvents } from '@gatehouse/contracts';
import { createJwtSigner, sha256Hex } from '@gatehouse/crypto';
import { createDevOutbox, type DevOutbox } from '@gatehouse/delivery';
import { createCallContext, createInProcessClient, serviceDescriptor } from '@gatehouse/rpc';
import { createLogger } from '@gatehouse/observability';
import { SOCIAL_PROVIDER_IDS } from './domain/admin-meta.ts';
import { createAdminService } from './service.ts';
import { createMemoryAdminStore } from './storage/memory.ts';

const SECRET = 'the-admin-secret-of-this-unit-test';

function setup(over: { authn?: null; cookieSecure?: boolean; devOutbox?: { enabled: boolean; outbox: DevOutbox | null } } = {}) {
  let now = 2_000_000_000;
  const store = createMemoryAdminAccessStore();
  const authenticator = createAuthenticator({
    jwt: createJwtSigner({ type: 'HS256', secret: 'x'.repeat(32) }), sessions: createMemorySessionStore(), issuer: 'https://auth.example.com',
    adminSecret: SECRET, disableAdminHeaderAuth: false, clientId: 'cid', clock: () => now,
    adminSessions: { isValid: async (h) => (await store.getSession(sha256Hex(h), now)) !== null }, adminSecretFailures: store.failures,
  });
  const events: Array<{ name: string; data: BusEvents['audit.recorded'] }> = [];
  const meta = { version: '2.3.0', client_id: 'cid', is_multi_factor_auth_enabled: true } as never;
  const service = createAdminService({
    authenticator, store, adminSecret: SECRET, adminCookieSecure: over.cookieSecure ?? true,
    meta: {
      roles: ['user', 'editor'], defaultRoles: ['user'], protectedRoles: [], isEmailConfigured: true, isSmsConfigured: false,
      databaseType: 'postgres', env: 'staging', fga: { enabled: true, store: 'postgres' },
      googleClientId: 'g-id', googleClientSecret: 'g-secret', githubClientId: 'gh-id',
      ...Object.fromEntries(SOCIAL_PROVIDER_IDS.map((p) => [`${p}Scopes`, [`${p}-scope`]])),
    } as never,
    authn: over.authn === null ? null : { GetMeta: async () => meta },
    record: async (name, data) => { events.push({ name, data: data as BusEvents['audit.recorded'] }); },
    now: () => now,
    ...(over.devOutbox ? { devOutbox: over.devOutbox } : {}),
  }, {
    authenticator, clientSecret: 'client-secret', store: createMemoryAdminStore(() => now), logger: createLogger('silent'), now: () => now,
    outbound: {
      checkEndpoint: async () => {},
      post: async () => { throw new Error('no outbound calls in this test'); },
    },
  });
  const client = createInProcessClient(serviceDescriptor('admin'), service.public.handlers);
  const call = async (rpc: string, req: unknown, headers: Record<string, string> = {}, clientIp = '10.0.0.1') => {
    const ctx = createCallContext({ headers, clientIp, protocol: 'rest' });
    const res = await client.call(rpc, req, ctx);
    return { res, cookies: [...ctx.setCookies] };
  };
  return { call, events, advance: (s: number) => { now += s; } };
}

describe('admin service (behaviour.md §5.1, §5.2, §5.7)', () => {
  it('login sets a Secure, HttpOnly, SameSite=Strict cookie and records admin.login_success; logout clears it', async () => {
    const s = setup();
    const { res, cookies } = await s.call('AdminLogin', { admin_secret: SECRET });
    expect(res).toEqual({ message: 'admin logged in successfully' });
    expect(cookies).toEqual([expect.stringMatching(/^service-admin=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=3600; HttpOnly; Secure; SameSite=Strict$/)]);
    const cookie = cookies[0]!.split(';')[0]!;
    const out = await s.call('AdminLogout', {}, { cookie });
    expect(out.res).toEqual({ message: 'admin logged out successfully' });
    expect(out.cookies[0]).toMatch(/^service-admin=; Path=\/; Max-Age=0/);
    await expect(s.call('AdminSession', {}, { cookie })).rejects.toMatchObject({ code: 'unauthenticated', message: 'unauthorized' });
    expect(s.events.map((e) => [e.data.action, e.data.actor_type, e.data.resource_type, JSON.parse(e.data.metadata).protocol])).toEqual([
      ['admin.login_success', 'admin', 'admin_session', 'rest'],
      ['admin.logout', 'admin', 'admin_session', 'rest'],
    ]);
  });

  it('a wrong secret is 401 and recorded as admin.login_failed, never with the secret', async () => {
    const s = setup({ cookieSecure: false });
    await expect(s.call('AdminLogin', { admin_secret: 'guess' })).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid admin secret' });
    expect(s.events.map((e) => e.data.action)).toEqual(['admin.login_failed']);
    expect(JSON.stringify(s.events)).not.toContain('guess');
  });

  it('session re-issues the cookie for a cookie caller, never past the absolute 8 h; a header caller gets the message only', async () => {
    const s = setup({ cookieSecure: false });
    const cookie = (await s.call('AdminLogin', { admin_secret: SECRET })).cookies[0]!.split(';')[0]!;
    let late = { cookies: [] as string[] };
    // kept alive by a refresh every 3000 s (< the 3600 s idle limit) for 7.5 h
    for (let i = 0; i < 9; i++) {
      s.advance(3000);
      late = await s.call('AdminSession', {}, { cookie });
    }
    expect(late.cookies[0]).toMatch(new RegExp(`^${cookie}; Path=/; Max-Age=1800; HttpOnly; SameSite=Strict$`));
    s.advance(1800);
    await expect(s.call('AdminSession', {}, { cookie })).rejects.toMatchObject({ code: 'unauthenticated' });
    const header = await s.call('AdminSession', {}, { 'x-service-admin-secret': SECRET });
    expect(header).toEqual({ res: { message: 'admin session refreshed successfully' }, cookies: [] });
  });

  it('AdminMeta is Meta plus the admin fields; env other than development reads production', async () => {
    const s = setup();
    const { res } = await s.call('AdminMeta', {}, { 'x-service-admin-secret': SECRET });
    expect(res).toMatchObject({
      version: '2.3.0', client_id: 'cid', roles: ['user', 'editor'], default_roles: ['user'], protected_roles: [],
      is_multi_factor_auth_service_enabled: true, is_email_service_enabled: true, is_sms_service_enabled: false,
      database_type: 'postgres', env: 'production', authorization_engine: { is_enabled: true, store: 'postgres', model_id: null },
      // issue 33 §1: no deployment given reads as all-in-one; no --nats-url, the in-process bus
      deployment: 'all-in-one', bus: 'in-process',
    });
    expect((res as { social_providers: unknown[] }).social_providers.slice(0, 3)).toEqual([
      { provider: 'google', is_enabled: true, has_client_id: true, has_client_secret: true, scopes: ['google-scope'] },
      { provider: 'facebook', is_enabled: false, has_client_id: false, has_client_secret: false, scopes: ['facebook-scope'] },
      { provider: 'github', is_enabled: false, has_client_id: true, has_client_secret: false, scopes: ['github-scope'] },
    ]);
    await expect(setup({ authn: null }).call('AdminMeta', {}, { 'x-service-admin-secret': SECRET })).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('the admin session cookie opens the webhook RPCs; without it they are 401', async () => {
    const s = setup({ cookieSecure: false });
    const cookie = (await s.call('AdminLogin', { admin_secret: SECRET })).cookies[0]!.split(';')[0]!;
    const added = await s.call('AddWebhook', { event_name: 'user.login', endpoint: 'https://hooks.example.com/in', enabled: true }, { cookie });
    expect(added.res).toMatchObject({ message: 'Webhook added successfully', id: expect.any(String), signing_secret: expect.stringMatching(/^whsec_/) });
    const listed = await s.call('Webhooks', {}, { cookie });
    expect((listed.res as { webhooks: Array<{ endpoint: string }> }).webhooks.map((w) => w.endpoint)).toEqual(['https://hooks.example.com/in']);
    await expect(s.call('Webhooks', {})).rejects.toMatchObject({ code: 'unauthenticated' });
  });
});

describe('DevOutbox (issue 33 §4, extension)', () => {
  const admin = { 'x-service-admin-secret': SECRET };
  it('lists the kept messages newest first to the super-admin, 401 to anyone else', async () => {
    const outbox = createDevOutbox(100, () => 1_800_000_000);
    outbox.add({ channel: 'email', to: 'ada@example.com', subject: 'Verify your email', text: 'open https://a.test/verify_email?token=t', html: '<p>x</p>' });
    outbox.add({ channel: 'sms', to: '+15551234567', subject: 'sms', text: 'Your verification code is: 123456', html: '' });
    const s = setup({ devOutbox: { enabled: true, outbox } });
    await expect(s.call('DevOutbox', {})).rejects.toMatchObject({ code: 'unauthenticated' });
    const { res } = await s.call('DevOutbox', {}, admin);
    expect(res).toEqual({
      messages: [
        { id: expect.any(String), channel: 'sms', to: '+15551234567', subject: 'sms', text: 'Your verification code is: 123456', html: '', created_at: 1_800_000_000 },
        { id: expect.any(String), channel: 'email', to: 'ada@example.com', subject: 'Verify your email', text: 'open https://a.test/verify_email?token=t', html: '<p>x</p>', created_at: 1_800_000_000 },
      ],
    });
  });
  it('refuses with failed_precondition outside development, and in split mode where the outbox is another process', async () => {
    await expect(setup().call('DevOutbox', {}, admin)).rejects.toMatchObject({ code: 'failed_precondition', message: expect.stringContaining('--env=development') });
    await expect(setup({ devOutbox: { enabled: false, outbox: null } }).call('DevOutbox', {}, admin)).rejects.toMatchObject({ code: 'failed_precondition' });
    await expect(setup({ devOutbox: { enabled: true, outbox: null } }).call('DevOutbox', {}, admin))
      .rejects.toMatchObject({ code: 'failed_precondition', message: expect.stringContaining('split mode') });
  });
});
