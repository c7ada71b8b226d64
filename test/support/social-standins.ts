/**
 * @module test/support/social-standins
 * Stand-ins of the ten social providers on 127.0.0.1 (issue 20), reached through
 * `--<provider>-base-url`:
 * - OpenID Connect (google, microsoft, apple, linkedin, twitch, roblox): panva's `oidc-provider`, the
 *   OpenID-certified implementation, one instance per issuer, mounted at the issuer's documented path
 *   (Microsoft `/<tenant>/v2.0`, LinkedIn `/oauth`, Twitch `/oauth2` plus Helix `/helix/users`, Roblox
 *   `/oauth/`). The login and consent interactions are answered by the test's account of the moment.
 * - OAuth 2.0 only (github, facebook, discord, twitter): the provider's documented authorize, token
 *   and user-info endpoints with their real response shapes (authorization code, PKCE S256, client
 *   authentication as the provider does it).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import express from 'express';
import Provider from 'oidc-provider';

/** A user of a stand-in: its stable id and profile. */
export interface StandinAccount {
  sub: string;
  email?: string | null;
  /** a boolean, or Apple's strings `"true"`/`"false"` */
  email_verified?: boolean | string;
  given_name?: string;
  family_name?: string;
  name?: string;
  nickname?: string;
  picture?: string;
}

export interface Standin {
  readonly provider: string;
  /** the `--<provider>-base-url` value: `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** the account the next login at the stand-in signs in as */
  next: StandinAccount;
  /** redirect URIs accepted (each deployment's `<url>/oauth_callback/<provider>`) */
  readonly redirectUris: string[];
  close(): Promise<void>;
}

const OIDC_PATHS: Record<string, string> = {
  google: '', apple: '', microsoft: '/11111111-2222-3333-4444-555555555555/v2.0', linkedin: '/oauth', twitch: '/oauth2', roblox: '/oauth/',
};
/** the tenant the Microsoft stand-in's issuer carries (`--microsoft-tenant-id`) */
export const MICROSOFT_TENANT = '11111111-2222-3333-4444-555555555555';
export const OIDC_PROVIDERS = Object.keys(OIDC_PATHS);
export const OAUTH2_PROVIDERS = ['github', 'facebook', 'discord', 'twitter'];

async function listen(app: express.Express): Promise<{ server: Server; port: number }> {
  const server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  return { server, port: (server.address() as { port: number }).port };
}

const closeServer = (server: Server): Promise<void> => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); });

/** oidc-provider's storage, in memory; the `Client` model answers the stand-in's client with its current redirect URIs. */
function memoryAdapter(clientOf: () => Record<string, unknown>) {
  const store = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();
  return class MemoryAdapter {
    name: string;
    constructor(name: string) { this.name = name; }
    key(id: string): string { return `${this.name}:${id}`; }
    async upsert(id: string, payload: Record<string, unknown>, expiresIn: number): Promise<void> {
      store.set(this.key(id), { payload, expiresAt: Date.now() + expiresIn * 1000 });
    }
    async find(id: string): Promise<Record<string, unknown> | undefined> {
      if (this.name === 'Client') return id === clientOf().client_id ? clientOf() : undefined;
      const e = store.get(this.key(id));
      return e && e.expiresAt > Date.now() ? e.payload : undefined;
    }
    async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
      for (const [k, e] of store) if (k.startsWith(`${this.name}:`) && e.payload.uid === uid) return e.payload;
      return undefined;
    }
    async findByUserCode(): Promise<undefined> { return undefined; }
    async consume(id: string): Promise<void> {
      const e = store.get(this.key(id));
      if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string): Promise<void> { store.delete(this.key(id)); }
    async revokeByGrantId(grantId: string): Promise<void> {
      for (const [k, e] of store) if (e.payload.grantId === grantId) store.delete(k);
    }
  };
}

/** An OpenID Connect stand-in (oidc-provider) for `provider`. */
export async function startOidcStandin(provider: string): Promise<Standin> {
  const app = express();
  const { server, port } = await listen(app);
  const baseUrl = `http://127.0.0.1:${port}`;
  const path = OIDC_PATHS[provider]!;
  const issuer = `${baseUrl}${path}`;
  const s: Standin = {
    provider, baseUrl, clientId: `${provider}-client`, clientSecret: randomBytes(16).toString('hex'),
    next: { sub: 'nobody' }, redirectUris: [],
    close: () => closeServer(server),
  };
  const accounts = new Map<string, StandinAccount>();
  const oidc = new Provider(issuer, {
    adapter: memoryAdapter(() => ({
      client_id: s.clientId, client_secret: s.clientSecret, redirect_uris: [...s.redirectUris],
      response_types: ['code'], grant_types: ['authorization_code'], token_endpoint_auth_method: 'client_secret_post',
    })),
    async findAccount(_ctx: unknown, sub: string) {
      const a = accounts.get(sub);
      if (!a) return undefined;
      const { sub: _, ...claims } = a;
      return { accountId: sub, claims: async () => ({ sub, ...claims }) };
    },
    claims: {
      openid: ['sub'], email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'nickname', 'picture', 'preferred_username'],
    },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'name', 'user:read:email'],
    // the ID token carries the profile claims too (Apple has no UserInfo endpoint)
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    responseTypes: ['code'],
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  // the test's account of the moment logs in and consents to what was asked
  app.get('/interaction/:uid', async (req, res, next) => {
    try {
      const details = await oidc.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        accounts.set(s.next.sub, { ...s.next });
        await oidc.interactionFinished(req, res, { login: { accountId: s.next.sub } }, { mergeWithLastSubmission: false });
        return;
      }
      const grant = details.grantId ? await oidc.Grant.find(details.grantId) : new oidc.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      const grantId = await grant.save();
      await oidc.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (err) {
      next(err);
    }
  });
  if (provider === 'twitch') {
    // Helix "Get Users": the user of the bearer token, with the Client-Id header Twitch requires
    app.get('/helix/users', async (req, res) => {
      const token = String(req.headers.authorization ?? '').replace(/^Bearer /i, '');
      const at = token ? await oidc.AccessToken.find(token) : undefined;
      if (!at || req.headers['client-id'] !== s.clientId) {
        res.status(401).json({ error: 'Unauthorized', status: 401, message: 'Invalid OAuth token' });
        return;
      }
      const a = accounts.get(at.accountId)!;
      res.json({ data: [{ id: a.sub, login: a.nickname ?? a.sub, display_name: a.name ?? a.nickname ?? a.sub, type: '', broadcaster_type: '', description: '', profile_image_url: a.picture ?? '', offline_image_url: '', view_count: 0, email: a.email ?? undefined, created_at: '2020-01-01T00:00:00Z' }] });
    });
  }
  app.use(path.replace(/\/$/, '') || '/', oidc.callback());
  return s;
}

interface PendingCode { sub: string; redirectUri: string; challenge: string; clientId: string }

/** The user-info answers of each OAuth 2.0 provider, in its documented shape. */
function mountUserInfo(provider: string, app: express.Express, accountOf: (req: express.Request) => StandinAccount | null): void {
  const guard = (fn: (a: StandinAccount, req: express.Request) => unknown): express.RequestHandler => (req, res) => {
    const a = accountOf(req);
    if (!a) {
      res.status(401).json({ message: 'Bad credentials' });
      return;
    }
    res.json(fn(a, req));
  };
  switch (provider) {
    case 'github':
      // REST API "Get the authenticated user" and "List email addresses for the authenticated user"
      app.get('/user', guard((a) => ({ login: a.nickname ?? `user${a.sub}`, id: Number(a.sub), node_id: `U_${a.sub}`, avatar_url: a.picture ?? null, type: 'User', name: a.name ?? null, email: null, created_at: '2020-01-01T00:00:00Z' })));
      app.get('/user/emails', guard((a) => (a.email ? [
        { email: a.email, primary: true, verified: a.email_verified === true, visibility: 'private' },
        { email: `${a.sub}+noreply@users.noreply.github.com`, primary: false, verified: true, visibility: null },
      ] : [])));
      break;
    case 'facebook':
      // Graph API "User": the fields asked for; `picture` is {data:{url,...}}
      app.get('/v19.0/me', guard((a, req) => {
        const fields = String(req.query.fields ?? 'id,name').split(',');
        const all: Record<string, unknown> = {
          id: a.sub, name: a.name, email: a.email ?? undefined, first_name: a.given_name, last_name: a.family_name,
          picture: { data: { height: 50, width: 50, is_silhouette: false, url: a.picture } },
        };
        return Object.fromEntries(fields.filter((f) => all[f] !== undefined).map((f) => [f, all[f]]));
      }));
      break;
    case 'discord':
      // "Get Current User": `verified` is whether the email is verified
      app.get('/api/users/@me', guard((a) => ({ id: a.sub, username: a.nickname ?? a.sub, global_name: a.name ?? null, discriminator: '0', avatar: 'a1b2c3', email: a.email ?? null, verified: a.email_verified === true, mfa_enabled: false, locale: 'en-US' })));
      break;
    default:
      // API v2 "GET /2/users/me"
      app.get('/2/users/me', guard((a) => ({ data: { id: a.sub, name: a.name ?? a.sub, username: a.nickname ?? a.sub, profile_image_url: a.picture } })));
  }
}

const PATHS: Record<string, { authorize: string; token: string }> = {
  github: { authorize: '/login/oauth/authorize', token: '/login/oauth/access_token' },
  facebook: { authorize: '/v19.0/dialog/oauth', token: '/v19.0/oauth/access_token' },
  discord: { authorize: '/oauth2/authorize', token: '/api/oauth2/token' },
  twitter: { authorize: '/i/oauth2/authorize', token: '/2/oauth2/token' },
};

/** An OAuth 2.0 stand-in of `provider` (github, facebook, discord, twitter). */
export async function startOauth2Standin(provider: string): Promise<Standin> {
  const app = express();
  app.use(express.urlencoded({ extended: false }));
  const { server, port } = await listen(app);
  const s: Standin = {
    provider, baseUrl: `http://127.0.0.1:${port}`, clientId: `${provider}-client`, clientSecret: randomBytes(16).toString('hex'),
    next: { sub: '0' }, redirectUris: [],
    close: () => closeServer(server),
  };
  const codes = new Map<string, PendingCode>();
  const tokens = new Map<string, StandinAccount>();
  const paths = PATHS[provider]!;

  app.get(paths.authorize, (req, res) => {
    const q = req.query as Record<string, string>;
    if (q.client_id !== s.clientId || !s.redirectUris.includes(q.redirect_uri ?? '') || q.response_type !== 'code') {
      res.status(400).json({ error: 'invalid_request' });
      return;
    }
    if (!q.code_challenge || q.code_challenge_method !== 'S256') {
      res.status(400).json({ error: 'invalid_request', error_description: 'PKCE S256 required' });
      return;
    }
    const code = randomBytes(16).toString('hex');
    const account = { ...s.next };
    codes.set(code, { sub: account.sub, redirectUri: q.redirect_uri!, challenge: q.code_challenge, clientId: q.client_id });
    tokens.set(`account:${account.sub}`, account);
    const to = new URL(q.redirect_uri!);
    to.searchParams.set('code', code);
    if (q.state) to.searchParams.set('state', q.state);
    res.redirect(302, to.href);
  });

  app.post(paths.token, (req, res) => {
    const body = req.body as Record<string, string>;
    let clientId = body.client_id;
    let secret = body.client_secret;
    if (provider === 'twitter') {
      // confidential clients authenticate with HTTP Basic (X API "OAuth 2.0 Authorization Code Flow with PKCE")
      const basic = /^Basic (.+)$/.exec(String(req.headers.authorization ?? ''));
      const [id, sec] = basic ? Buffer.from(basic[1]!, 'base64').toString().split(':').map(decodeURIComponent) : [];
      clientId = id;
      secret = sec;
    }
    const pending = codes.get(body.code ?? '');
    codes.delete(body.code ?? '');
    const verifier = body.code_verifier ?? '';
    if (clientId !== s.clientId || secret !== s.clientSecret) {
      res.status(401).json({ error: 'invalid_client' });
      return;
    }
    if (!pending || pending.redirectUri !== body.redirect_uri || createHash('sha256').update(verifier).digest('base64url') !== pending.challenge) {
      res.status(400).json({ error: 'invalid_grant' });
      return;
    }
    const accessToken = randomBytes(20).toString('hex');
    tokens.set(accessToken, tokens.get(`account:${pending.sub}`)!);
    res.json({ access_token: accessToken, token_type: 'bearer', expires_in: 3600, scope: String(body.scope ?? '') });
  });

  mountUserInfo(provider, app, (req) => {
    const m = /^Bearer (.+)$/i.exec(String(req.headers.authorization ?? ''));
    return m ? tokens.get(m[1]!) ?? null : null;
  });
  return s;
}

/** The deployment flags that point `provider` at its stand-in. */
export function standinFlags(s: Standin): string[] {
  const flags = [`--${s.provider}-client-id=${s.clientId}`, `--${s.provider}-client-secret=${s.clientSecret}`, `--${s.provider}-base-url=${s.baseUrl}`];
  if (s.provider === 'microsoft') flags.push(`--microsoft-tenant-id=${MICROSOFT_TENANT}`);
  return flags;
}

/** Cookies per host name, as a browser keeps them (ports share a host's cookies). */
export class Jar {
  private readonly byHost = new Map<string, Map<string, string>>();
  header(url: string): string {
    return [...(this.byHost.get(new URL(url).hostname) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  store(url: string, setCookies: string[]): void {
    const host = new URL(url).hostname;
    const jar = this.byHost.get(host) ?? new Map<string, string>();
    for (const line of setCookies) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (/max-age=0/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.byHost.set(host, jar);
  }
  get(url: string, name: string): string | undefined {
    return this.byHost.get(new URL(url).hostname)?.get(name);
  }
}

export interface Visit { status: number; location: string | null; body: string; setCookies: string[] }

/** One request with `jar`'s cookies, redirects not followed; the answer's cookies go into `jar`. */
export async function visit(jar: Jar, url: string, init: { method?: string; form?: URLSearchParams } = {}): Promise<Visit> {
  const headers: Record<string, string> = { cookie: jar.header(url) };
  if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(url, { method: init.method ?? 'GET', headers, redirect: 'manual', ...(init.form ? { body: init.form } : {}) });
  const setCookies = res.headers.getSetCookie();
  jar.store(url, setCookies);
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location, url).href : null, body: await res.text(), setCookies };
}

/** The auto-submitting form of a response_mode=form_post page (OAuth 2.0 Form Post Response Mode): its action and fields. */
export function formPost(html: string): { action: string; fields: URLSearchParams } | null {
  const form = /<form[^>]*action="([^"]+)"/.exec(html);
  if (!form) return null;
  const unescape = (v: string): string => v.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#x2F;/g, '/');
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)) fields.set(m[1]!, unescape(m[2]!));
  return { action: unescape(form[1]!), fields };
}
