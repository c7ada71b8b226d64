/**
 * @module @gatehouse/authn/social/providers
 * The ten social providers (issue 20): each one's endpoints (OpenID Connect discovery from its issuer,
 * or its documented OAuth 2.0 endpoints), its client authentication, and how its identity is read
 * from its documented user-info response. `--<provider>-base-url` replaces the scheme, host and port
 * of every endpoint, keeping the documented path.
 */
import type { AuthnOptions, Provider } from '../domain/options.ts';

/** What the flow reads from a provider about its user (the federated identity, issue 20). */
export interface UpstreamProfile {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  givenName?: string | null;
  familyName?: string | null;
  nickname?: string | null;
  picture?: string | null;
}

/** How one provider is reached. */
export interface ProviderSpec {
  /** `oidc`: discovery at `<issuer>/.well-known/openid-configuration`, ID token with `nonce` */
  kind: 'oidc' | 'oauth2';
  /** OIDC: the issuer (before `--<provider>-base-url`); `{tenant}` is `--microsoft-tenant-id` */
  issuer?: string;
  /** OAuth 2.0: the documented authorization and token endpoints */
  authorize?: string;
  token?: string;
  /** the documented API origin(s) the user-info calls go to (moved by the base URL too) */
  api?: string;
  /** RFC 6749 §2.3.1: `basic` (Twitter) or `post` */
  clientAuth: 'basic' | 'post';
  /** Apple: `form_post` (the callback is a POST) */
  responseMode?: 'form_post';
}

export const PROVIDER_SPECS: Readonly<Record<Provider, ProviderSpec>> = {
  google: { kind: 'oidc', issuer: 'https://accounts.google.com', clientAuth: 'post' },
  microsoft: { kind: 'oidc', issuer: 'https://login.microsoftonline.com/{tenant}/v2.0', clientAuth: 'post' },
  apple: { kind: 'oidc', issuer: 'https://appleid.apple.com', clientAuth: 'post', responseMode: 'form_post' },
  linkedin: { kind: 'oidc', issuer: 'https://www.linkedin.com/oauth', clientAuth: 'post' },
  twitch: { kind: 'oidc', issuer: 'https://id.twitch.tv/oauth2', api: 'https://api.twitch.tv', clientAuth: 'post' },
  roblox: { kind: 'oidc', issuer: 'https://apis.roblox.com/oauth/', clientAuth: 'post' },
  github: {
    kind: 'oauth2', authorize: 'https://github.com/login/oauth/authorize', token: 'https://github.com/login/oauth/access_token',
    api: 'https://api.github.com', clientAuth: 'post',
  },
  facebook: {
    kind: 'oauth2', authorize: 'https://www.facebook.com/v19.0/dialog/oauth', token: 'https://graph.facebook.com/v19.0/oauth/access_token',
    api: 'https://graph.facebook.com/v19.0', clientAuth: 'post',
  },
  discord: {
    kind: 'oauth2', authorize: 'https://discord.com/oauth2/authorize', token: 'https://discord.com/api/oauth2/token',
    api: 'https://discord.com/api', clientAuth: 'post',
  },
  twitter: {
    kind: 'oauth2', authorize: 'https://twitter.com/i/oauth2/authorize', token: 'https://api.twitter.com/2/oauth2/token',
    api: 'https://api.twitter.com', clientAuth: 'basic',
  },
};

/** Default scopes (behaviour.md §1.3), used when the options carry none. */
const DEFAULT_SCOPES: Readonly<Record<Provider, readonly string[]>> = {
  google: ['openid', 'profile', 'email'], github: ['read:user', 'user:email'], facebook: ['public_profile', 'email'],
  microsoft: ['openid', 'profile', 'email'], apple: ['email', 'name'], linkedin: ['openid', 'profile', 'email'],
  discord: ['identify', 'email'], twitter: ['tweet.read', 'users.read'], twitch: ['openid', 'user:read:email'], roblox: ['openid', 'profile'],
};

/** `--<provider>-scopes`, with `openid` added for an OIDC provider (Apple's defaults omit it). */
export function providerScopes(o: AuthnOptions, p: Provider): string[] {
  const list = [...(o[`${p}Scopes`] ?? DEFAULT_SCOPES[p])];
  if (PROVIDER_SPECS[p].kind === 'oidc' && !list.includes('openid')) list.unshift('openid');
  return list;
}

/** `url` with its scheme, host and port replaced by `--<provider>-base-url` (when set). */
export function moved(o: AuthnOptions, p: Provider, url: string): string {
  const base = o[`${p}BaseUrl`];
  if (!base) return url;
  const from = new URL(url);
  const to = new URL(base);
  return `${to.protocol}//${to.host}${from.pathname}${from.search}`;
}

/** The provider's OIDC issuer as configured (tenant substituted, base URL applied). */
export function issuerOf(o: AuthnOptions, p: Provider): string {
  const spec = PROVIDER_SPECS[p];
  return moved(o, p, spec.issuer!.replace('{tenant}', encodeURIComponent(o.microsoftTenantId ?? 'common')));
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/**
 * Apple's `email_verified` (and `is_private_email`) arrive as booleans or as the strings "true"/"false"
 * (Sign in with Apple REST API, "Authenticating users with Sign in with Apple").
 */
const truthy = (v: unknown): boolean => v === true || v === 'true';

/**
 * The identity in OIDC claims (ID token merged with the UserInfo response, OIDC Core §5.1).
 * Microsoft's `email` is not verified by Entra ID unless `xms_edov` says so (its `email` claim is
 * mutable), so a Microsoft email counts as verified only with `email_verified` or `xms_edov` true.
 */
export function profileFromClaims(p: Provider, claims: Record<string, unknown>, appleUser?: string | null): UpstreamProfile {
  const profile: UpstreamProfile = {
    subject: String(claims.sub ?? ''),
    email: str(claims.email),
    emailVerified: truthy(claims.email_verified) || (p === 'microsoft' && truthy(claims.xms_edov)),
    givenName: str(claims.given_name),
    familyName: str(claims.family_name),
    nickname: str(claims.nickname) ?? str(claims.preferred_username) ?? str(claims.name),
    picture: str(claims.picture),
  };
  if (p === 'apple' && appleUser) {
    // the form_post `user` JSON, sent on the first authorization only: {"name":{"firstName","lastName"},"email"}
    try {
      const u = JSON.parse(appleUser) as { name?: { firstName?: unknown; lastName?: unknown } };
      profile.givenName = str(u.name?.firstName) ?? profile.givenName ?? null;
      profile.familyName = str(u.name?.lastName) ?? profile.familyName ?? null;
    } catch {
      // not JSON: the names stay unknown
    }
  }
  return profile;
}

/** GitHub `GET /user` and `GET /user/emails` (REST API "Users", "Emails"): the primary address and its `verified`. */
export function profileFromGithub(user: Record<string, unknown>, emails: unknown): UpstreamProfile {
  const list = Array.isArray(emails) ? emails as Array<{ email?: unknown; primary?: unknown; verified?: unknown }> : [];
  const primary = list.find((e) => e.primary === true) ?? null;
  const name = str(user.name);
  const [given, ...rest] = name ? name.split(' ') : [];
  return {
    subject: String(user.id ?? ''),
    email: primary ? str(primary.email) : str(user.email),
    emailVerified: primary ? primary.verified === true : false,
    givenName: given ?? null,
    familyName: rest.length > 0 ? rest.join(' ') : null,
    nickname: str(user.login),
    picture: str(user.avatar_url),
  };
}

/**
 * Facebook Graph `GET /me?fields=id,name,email,first_name,last_name,picture`. Facebook returns `email`
 * only for a confirmed address ("User" reference: no email without a valid one), so it counts as verified.
 */
export function profileFromFacebook(me: Record<string, unknown>): UpstreamProfile {
  const picture = (me.picture as { data?: { url?: unknown } } | undefined)?.data?.url;
  const email = str(me.email);
  return {
    subject: String(me.id ?? ''),
    email, emailVerified: email !== null,
    givenName: str(me.first_name), familyName: str(me.last_name), nickname: str(me.name), picture: str(picture),
  };
}

/** Discord `GET /users/@me` ("User Object"): `verified` is whether the email is verified; avatar on the CDN. */
export function profileFromDiscord(me: Record<string, unknown>): UpstreamProfile {
  const id = String(me.id ?? '');
  const avatar = str(me.avatar);
  return {
    subject: id,
    email: str(me.email),
    emailVerified: me.verified === true,
    nickname: str(me.global_name) ?? str(me.username),
    picture: avatar ? `https://cdn.discordapp.com/avatars/${encodeURIComponent(id)}/${encodeURIComponent(avatar)}.png` : null,
  };
}

/** Twitter API v2 `GET /2/users/me` (`{data:{id,name,username,profile_image_url}}`): no email. */
export function profileFromTwitter(body: Record<string, unknown>): UpstreamProfile {
  const d = (body.data ?? {}) as Record<string, unknown>;
  return { subject: String(d.id ?? ''), email: null, emailVerified: false, nickname: str(d.username) ?? str(d.name), picture: str(d.profile_image_url) };
}

/** Twitch Helix `GET /helix/users` (`{data:[{id,login,display_name,email,profile_image_url}]}`) over the OIDC identity. */
export function withTwitchUser(profile: UpstreamProfile, body: Record<string, unknown>): UpstreamProfile {
  const d = ((body.data as unknown[] | undefined)?.[0] ?? {}) as Record<string, unknown>;
  return {
    ...profile,
    email: profile.email ?? str(d.email),
    nickname: str(d.display_name) ?? str(d.login) ?? profile.nickname ?? null,
    picture: str(d.profile_image_url) ?? profile.picture ?? null,
  };
}
