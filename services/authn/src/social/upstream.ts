/**
 * @module @gatehouse/authn/social/upstream
 * The calls to the social providers (issue 20), all through `openid-client` (panva): OpenID Connect
 * discovery, authorization URLs with `state`, PKCE S256 (RFC 7636) and, for OIDC providers, `nonce`;
 * the code exchange with its state, PKCE and ID token checks (`iss`, `aud`, `exp`, `nonce`, OIDC Core
 * §3.1.3.7); UserInfo (OIDC Core §5.3) and the providers' documented user-info APIs as protected
 * resources (RFC 6750). Only the authn service talks to the upstreams.
 */
import * as oidc from 'openid-client';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import type { AuthnOptions, Provider } from '../domain/options.ts';
import {
  issuerOf, moved, profileFromClaims, profileFromDiscord, profileFromFacebook, profileFromGithub, profileFromTwitter, providerScopes,
  withTwitchUser, PROVIDER_SPECS, type UpstreamProfile,
} from './providers.ts';

/** The upstream half of a pending login (kept in the sealed cookie between login and callback). */
export interface UpstreamChecks {
  /** the `state` sent to the provider */
  state: string;
  /** the PKCE code verifier */
  codeVerifier: string;
  /** OIDC providers: the `nonce` the ID token must carry */
  nonce?: string;
}

/** The parameters the provider sent to the callback. */
export interface CallbackParams {
  code?: string | null;
  state?: string | null;
  /** Apple's form_post `user` JSON */
  user?: string | null;
  /** RFC 9207 `iss` of the authorization response */
  iss?: string | null;
}

/** The social providers as authn reaches them. */
export interface SocialUpstream {
  /** New random checks for a login with `p`. */
  newChecks(p: Provider): UpstreamChecks;
  /**
   * The provider's authorization URL (RFC 6749 §4.1.1) for `checks`.
   * @throws AppError `unavailable` when discovery fails
   */
  authorizationUrl(p: Provider, checks: UpstreamChecks): Promise<string>;
  /**
   * Exchanges the code and reads the user's identity.
   * @throws AppError `unauthenticated` `<provider> login failed: <reason>` (state, PKCE, ID token,
   *   nonce, token or user-info refusal); `unavailable` when the provider cannot be reached
   */
  identity(p: Provider, checks: UpstreamChecks, params: CallbackParams): Promise<UpstreamProfile>;
}

/** The callback URL registered with the provider: `<url>/oauth_callback/<provider>`. */
export const callbackUrl = (o: AuthnOptions, p: Provider): string => `${o.url}/oauth_callback/${p}`;

/** Builds the upstream client of the providers configured in `o` (configurations cached per provider). */
export function createSocialUpstream(o: AuthnOptions, logger: Logger): SocialUpstream {
  const configs = new Map<Provider, Promise<oidc.Configuration>>();

  const insecure = (p: Provider): boolean => (o[`${p}BaseUrl`] ?? '').startsWith('http:');
  const clientAuth = (p: Provider): oidc.ClientAuth => {
    const secret = o[`${p}ClientSecret`] ?? '';
    return PROVIDER_SPECS[p].clientAuth === 'basic' ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret);
  };

  async function build(p: Provider): Promise<oidc.Configuration> {
    const spec = PROVIDER_SPECS[p];
    const clientId = o[`${p}ClientId`] ?? '';
    const execute = insecure(p) ? [oidc.allowInsecureRequests] : [];
    if (spec.kind === 'oidc') {
      return oidc.discovery(new URL(issuerOf(o, p)), clientId, undefined, clientAuth(p), { execute, timeout: 10 });
    }
    const config = new oidc.Configuration(
      { issuer: moved(o, p, new URL(spec.authorize!).origin), authorization_endpoint: moved(o, p, spec.authorize!), token_endpoint: moved(o, p, spec.token!) },
      clientId, undefined, clientAuth(p),
    );
    for (const f of execute) f(config);
    return config;
  }

  function configOf(p: Provider): Promise<oidc.Configuration> {
    let c = configs.get(p);
    if (!c) {
      c = build(p);
      configs.set(p, c);
      // a failed discovery is asked again on the next login
      c.catch(() => configs.delete(p));
    }
    return c;
  }

  async function api(p: Provider, config: oidc.Configuration, accessToken: string, url: string, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const res = await oidc.fetchProtectedResource(config, accessToken, new URL(moved(o, p, url)), 'GET', undefined, new Headers({ accept: 'application/json', ...headers }));
    if (!res.ok) throw new AppError('unauthenticated', `${p} login failed: its user-info API answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  }

  async function profileOf(p: Provider, config: oidc.Configuration, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, params: CallbackParams): Promise<UpstreamProfile> {
    const spec = PROVIDER_SPECS[p];
    const at = tokens.access_token;
    if (spec.kind === 'oidc') {
      const claims = (tokens.claims() ?? {}) as Record<string, unknown>;
      let merged = claims;
      if (p !== 'apple' && config.serverMetadata().userinfo_endpoint) {
        const info = await oidc.fetchUserInfo(config, at, String(claims.sub));
        merged = { ...info, ...claims, email: claims.email ?? info.email, email_verified: claims.email_verified ?? info.email_verified };
      }
      const profile = profileFromClaims(p, merged, params.user);
      if (p === 'twitch') return withTwitchUser(profile, await api(p, config, at, `${spec.api}/helix/users`, { 'client-id': o.twitchClientId ?? '' }));
      return profile;
    }
    switch (p) {
      case 'github': {
        const gh = { accept: 'application/vnd.github+json' };
        return profileFromGithub(await api(p, config, at, `${spec.api}/user`, gh), await api(p, config, at, `${spec.api}/user/emails`, gh));
      }
      case 'facebook':
        return profileFromFacebook(await api(p, config, at, `${spec.api}/me?fields=id,name,email,first_name,last_name,picture`));
      case 'discord':
        return profileFromDiscord(await api(p, config, at, `${spec.api}/users/@me`));
      case 'twitter':
        return profileFromTwitter(await api(p, config, at, `${spec.api}/2/users/me?user.fields=profile_image_url`));
      case 'google': case 'microsoft': case 'apple': case 'linkedin': case 'twitch': case 'roblox':
        throw new Error(`${p} is an OpenID Connect provider`);
    }
  }

  return {
    newChecks(p) {
      return { state: oidc.randomState(), codeVerifier: oidc.randomPKCECodeVerifier(), ...(PROVIDER_SPECS[p].kind === 'oidc' ? { nonce: oidc.randomNonce() } : {}) };
    },

    async authorizationUrl(p, checks) {
      let config: oidc.Configuration;
      try {
        config = await configOf(p);
      } catch (err) {
        logger.warn({ err, provider: p }, 'social provider discovery failed');
        throw new AppError('unavailable', `${p} login is temporarily unavailable`);
      }
      const params: Record<string, string> = {
        redirect_uri: callbackUrl(o, p),
        response_type: 'code',
        scope: providerScopes(o, p).join(' '),
        state: checks.state,
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      };
      if (checks.nonce) params.nonce = checks.nonce;
      if (PROVIDER_SPECS[p].responseMode) params.response_mode = PROVIDER_SPECS[p].responseMode!;
      return oidc.buildAuthorizationUrl(config, params).href;
    },

    async identity(p, checks, params) {
      try {
        const config = await configOf(p);
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries({ code: params.code, state: params.state, iss: params.iss })) if (v) query.set(k, v);
        // Apple answers with response_mode=form_post: the callback is a POST form (OAuth 2.0 Form Post Response Mode)
        const current: URL | Request = PROVIDER_SPECS[p].responseMode === 'form_post'
          ? new Request(callbackUrl(o, p), { method: 'POST', body: query, headers: { 'content-type': 'application/x-www-form-urlencoded' } })
          : new URL(`${callbackUrl(o, p)}?${query}`);
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          ...(checks.nonce ? { expectedNonce: checks.nonce } : {}),
          idTokenExpected: PROVIDER_SPECS[p].kind === 'oidc',
        });
        const profile = await profileOf(p, config, tokens, params);
        if (profile.subject === '') throw new AppError('unauthenticated', `${p} login failed: no user id in its answer`);
        return profile;
      } catch (err) {
        if (err instanceof AppError) throw err;
        if (err instanceof TypeError || (err as { code?: string }).code === 'OAUTH_TIMEOUT') {
          logger.warn({ err, provider: p }, 'social provider unreachable');
          throw new AppError('unavailable', `${p} login is temporarily unavailable`);
        }
        const e = err as { error_description?: string; error?: string; message?: string; cause?: unknown };
        logger.info({ err, provider: p }, 'social login refused');
        // openid-client wraps oauth4webapi's precise reason (e.g. `unexpected ID Token "nonce" claim value`)
        const reason = e.error_description ?? e.error ?? (e.cause instanceof Error ? e.cause.message : e.message) ?? 'invalid response';
        throw new AppError('unauthenticated', `${p} login failed: ${reason}`);
      }
    },
  };
}
