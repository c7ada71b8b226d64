/**
 * @module orgs/sso/flows
 * `OrgsService.SsoRequest`: one browser request of organization SSO (behaviour.md §6.3, issue 20),
 * forwarded by the gateway (gateway/src/sso.ts).
 *
 * | action | route | answer |
 * |---|---|---|
 * | `oidc_login` | `GET /oauth/sso/<org>/login?redirect_uri&state&roles&scope` | 302 to the org's OIDC IdP (audit `sso.login_initiated`) |
 * | `oidc_callback` | `GET /oauth/sso/<org>/callback` | the federated completion → 302 with cookies (`sso.callback_success`) |
 * | `saml_metadata` | `GET /oauth/saml/<org>/metadata` | our SP metadata (XML) |
 * | `saml_login` | `GET /oauth/saml/<org>/login?redirect_uri&state&roles&scope` | the AuthnRequest signed with the connection's SP key to `idp_sso_url`: 302 (HTTP-Redirect) or an auto-posting form (HTTP-POST) (`saml.login_initiated`) |
 * | `saml_acs` | `POST /oauth/saml/<org>/acs` (CSRF-exempt, §2.5) | the federated completion → 302 (`saml.acs_success` / `saml.acs_failed`) |
 * | `saml_logout_confirm` | `GET /oauth/saml/<org>/logout` | a confirmation page whose one button POSTs the logout (a GET changes nothing, so a cross-site link or image cannot sign anyone out) |
 * | `saml_logout` | `POST /oauth/saml/<org>/logout` (CSRF-checked by the gateway, §2.5; the gateway then ends the Gatehouse session) | SP-initiated Single Logout: 302 signed LogoutRequest (HTTP-Redirect) to `idp_slo_url` (`saml.logout_initiated`) |
 * | `saml_slo` | `GET /oauth/saml/<org>/slo` | the IdP's signed LogoutResponse → 302 to `<url>/app/login` (`saml.logout_completed` / `saml.logout_failed`) |
 * | `discover` | `GET /api/v1/org-discovery?email=` (`--enable-org-discovery`) | JSON: the org whose verified domain the email has, and its login URL |
 * | `discover_login` | `GET /oauth/sso/discover?email&redirect_uri&state&roles&scope` (`--enable-org-discovery`; an extension) | 302 to that login URL |
 *
 * The OIDC login sets `__Host-gh_sso_state` (its `state`; HttpOnly, SameSite=Lax, 10 min; without
 * `--app-cookie-secure` `gh_sso_state` on `/oauth/sso`); the callback requires it (400 `SSO login failed: the login was not started in this browser`) and clears it.
 *
 * A missing org → 404 `organization not found`; a disabled org → 400 `failed_precondition`
 * `organization is disabled` (§6.1); no or an inactive connection → 404 `OIDC connection not found` /
 * `SAML connection not found`, 400 `failed_precondition` `OIDC connection is inactive` / `SAML connection is inactive`.
 * Errors are JSON `{code, message}` with the §0.2 status; the gateway turns those of the browser steps
 * into a 303 to the hosted app's error screen when a browser asked (gateway/src/sso.ts).
 *
 * After a valid IdP answer the user is completed by authn (`CompleteFederatedLogin`: JIT creation,
 * account linking by verified email, the §4.1 MFA gate, session cookies) and, JIT or not, made a member
 * of the org (no roles; idempotent): the org's IdP vouched for them.
 */
import { auditRecord, ownCookie, ownCookieName, parseCookies, pathUnder, type AuditActor } from '@gatehouse/auth';
import { decrypt, encrypt, timingSafeEqualString } from '@gatehouse/crypto';
import type { BusEvents, orgs } from '@gatehouse/contracts';
import { AppError, httpStatusOf, toAppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';
import type { CallContext } from '@gatehouse/rpc';
import type { OrganizationRecord } from '../storage/ports.ts';
import { ORGANIZATION_NOT_FOUND } from '../domain/members.ts';
import type { SsoDeps } from './deps.ts';
import type { FederatedIdentity } from './identity.ts';
import { PENDING_TTL_S, SamlRejected, SsoRejected, type LoginParams } from './login.ts';
import type * as OidcModule from './oidc.ts';
import type * as SamlModule from './saml.ts';

// the protocol libraries (@node-saml/node-saml with its XML stack ≈ 5 MiB of heap, openid-client) load
// with the first request that needs them, not at start-up (issue 22 §3)
const saml = async (): Promise<typeof SamlModule> => import('./saml.ts');
const oidc = async (): Promise<typeof OidcModule> => import('./oidc.ts');

/** authn's federated completion (its internal `CompleteFederatedLogin`): cookies go to `ctx.setCookies`. */
export interface FederatedCompletion {
  /**
   * @returns where to send the browser (the app's redirect_uri with tokens, with the MFA gate's
   *   parameters, or with `error`/`error_description` when authn refused: invalid roles, a revoked user,
   *   an unverified email of an existing account, …), the user (null when refused), whether it was
   *   created now, and authn's error code of a refusal
   * @throws AppError when authn cannot be reached
   */
  complete(input: { method: 'sso'; orgId: string; identity: FederatedIdentity; params: LoginParams }, ctx: CallContext): Promise<FederatedOutcome>;
}

/** What authn answered a federated completion. */
export interface FederatedOutcome { redirectUrl: string; userId: string | null; created: boolean; error: string | null }

export interface SsoFlowDeps {
  sso: SsoDeps;
  /** null: logins answer 501 (no authn in this deployment) */
  completion: FederatedCompletion | null;
  /** adds the user to the org with no roles; a no-op for a member */
  addMember(orgId: string, userId: string): Promise<void>;
  /**
   * records `audit.recorded`: resolves once the row is in orgs' outbox (a login changes no row of orgs',
   * so the row is a durable write of its own before the answer; issue 32 §1); never rejects
   */
  audit(record: BusEvents['audit.recorded']): Promise<void>;
  /** `--enable-org-discovery` */
  discoveryEnabled: boolean;
  /** `--app-cookie-secure`: the Secure attribute of the OIDC login's browser-binding cookie */
  cookieSecure: boolean;
  logger: Logger;
}

const ANONYMOUS: AuditActor = { type: 'user', id: null };
/**
 * Binds an OIDC login to the browser that started it (login CSRF, RFC 6749 §10.12): the `state` in a
 * host-only, HttpOnly, SameSite=Lax cookie, required equal at the callback; `__Host-` prefixed when
 * Secure, else under `/oauth/sso` (issue 30 §7, libs/auth `ownCookie`).
 */
const STATE_COOKIE = 'gh_sso_state';
const stateCookie = (f: SsoFlowDeps, value: string, maxAgeSeconds: number): string =>
  ownCookie(STATE_COOKIE, value, { maxAgeSeconds, path: pathUnder(f.sso.baseUrl, '/oauth/sso'), secure: f.cookieSecure, sameSite: 'lax' });
/**
 * The IdP session of a SAML login (NameID, format, SessionIndex; SAML Core §3.7.1), for SP-initiated
 * Single Logout: AES-256-GCM sealed under the SSO ring (associated data `saml_slo:<org id>`), HttpOnly,
 * SameSite=Lax, 30 days; `__Host-` prefixed when Secure, else under `/oauth/saml`. Set by the ACS of a
 * connection with `idp_slo_url`, cleared by the logout.
 */
const SLO_COOKIE = 'gh_saml_slo';
const SLO_COOKIE_TTL_S = 30 * 86_400;
const sloCookie = (f: SsoFlowDeps, value: string, maxAgeSeconds: number): string =>
  ownCookie(SLO_COOKIE, value, { maxAgeSeconds, path: pathUnder(f.sso.baseUrl, '/oauth/saml'), secure: f.cookieSecure, sameSite: 'lax' });
const MAX_PARAM = 4096;
const json = (status: number, body: unknown): orgs.SsoHttpResponse => ({ status, body: JSON.stringify(body), content_type: 'application/json; charset=utf-8' });
const redirect = (location: string): orgs.SsoHttpResponse => ({ status: 302, location, body: '', content_type: '' });
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page `GET /oauth/saml/<org>/logout` answers (as Keycloak asks before a logout it cannot tie to the
 * caller): the org's name and one button that POSTs to the same URL, where the gateway's Origin check
 * (behaviour.md §2.5) stands between another site and the logout. No script; nothing changes on GET.
 */
function logoutConfirmPage(baseUrl: string, org: OrganizationRecord): string {
  const name = escapeHtml(org.displayName || org.name);
  const action = escapeHtml(`${baseUrl}/oauth/saml/${encodeURIComponent(org.name)}/logout`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign out of ${name}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}button{font-size:1rem;padding:.5rem 1.25rem}</style></head>
<body><h1>Sign out of ${name}?</h1><p>This ends your session here and at your organization's identity provider.</p>
<form method="post" action="${action}"><button type="submit" id="confirm-logout">Sign out</button></form></body></html>
`;
}

/** The request's parameters as strings (each at most 4 KiB; `SAMLResponse` up to 1 MiB). */
function paramsOf(raw: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) {
    if (typeof v !== 'string') continue;
    if (v.length > (k === 'SAMLResponse' || k === '__raw_query' ? 1_048_576 : MAX_PARAM)) throw new AppError('invalid_argument', `${k} is too long`);
    out[k] = v;
  }
  return out;
}

const loginParams = (p: Record<string, string>): LoginParams => {
  const out: LoginParams = {};
  for (const k of ['redirect_uri', 'state', 'roles', 'scope'] as const) if (p[k] !== undefined && p[k] !== '') out[k] = p[k];
  return out;
};

/** @throws AppError `not_found` `organization not found`, `failed_precondition` `organization is disabled` */
async function enabledOrg(d: SsoDeps, name: string): Promise<OrganizationRecord> {
  const org = name !== '' && name.length <= 255 ? await d.orgs.organizations.byName(name) : null;
  if (!org) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  if (!org.enabled) throw new AppError('failed_precondition', 'organization is disabled');
  return org;
}

async function activeOidc(d: SsoDeps, org: OrganizationRecord) {
  const c = await d.store.oidc.byOrg(org.id);
  if (!c) throw new AppError('not_found', 'OIDC connection not found');
  if (!c.isActive) throw new AppError('failed_precondition', 'OIDC connection is inactive');
  return c;
}

async function activeSaml(d: SsoDeps, org: OrganizationRecord) {
  const c = await d.store.saml.byOrg(org.id);
  if (!c) throw new AppError('not_found', 'SAML connection not found');
  if (!c.isActive) throw new AppError('failed_precondition', 'SAML connection is inactive');
  return c;
}

/** The login URL of the org whose verified domain `email` has (behaviour.md §6.2, §6.3). */
async function discover(f: SsoFlowDeps, p: Record<string, string>): Promise<{ org: OrganizationRecord; protocol: 'oidc' | 'saml'; loginUrl: string }> {
  const email = (p['email'] ?? '').trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1 || /\s/.test(email)) throw new AppError('invalid_argument', 'invalid email address');
  const entry = await f.sso.orgs.domains.verified(email.slice(at + 1));
  const org = entry ? await f.sso.orgs.organizations.get(entry.orgId) : null;
  if (!org) throw new AppError('not_found', 'no organization has verified this email domain');
  if (!org.enabled) throw new AppError('failed_precondition', 'organization is disabled');
  const oidc = await f.sso.store.oidc.byOrg(org.id);
  const saml = await f.sso.store.saml.byOrg(org.id);
  const protocol = oidc?.isActive ? 'oidc' : saml?.isActive ? 'saml' : null;
  if (!protocol) throw new AppError('not_found', 'the organization has no active SSO connection');
  const url = new URL(`${f.sso.baseUrl}/oauth/${protocol === 'oidc' ? 'sso' : 'saml'}/${encodeURIComponent(org.name)}/login`);
  for (const [k, v] of Object.entries(loginParams(p))) url.searchParams.set(k, v);
  return { org, protocol, loginUrl: url.toString() };
}

/** Completes a validated federated login: authn, then (when a user logged in or was gated) the org membership. */
async function complete(f: SsoFlowDeps, ctx: CallContext, org: OrganizationRecord, identity: FederatedIdentity, params: LoginParams): Promise<FederatedOutcome> {
  if (!f.completion) throw new AppError('unimplemented', 'federated login is not available in this deployment');
  const out = await f.completion.complete({ method: 'sso', orgId: org.id, identity, params }, ctx);
  if (out.userId && !out.error) await f.addMember(org.id, out.userId);
  return out;
}

/**
 * Answers one SSO request (module table).
 * @returns the HTTP answer; refusals are JSON errors, never thrown (except `cancelled`)
 */
export async function handleSsoRequest(f: SsoFlowDeps, req: orgs.SsoHttpRequest, ctx: CallContext): Promise<orgs.SsoHttpResponse> {
  const d = f.sso;
  let org: OrganizationRecord | null = null;
  try {
    const p = paramsOf(req.params as Record<string, unknown> | undefined);
    switch (req.action) {
      case 'discover':
      case 'discover_login': {
        if (!f.discoveryEnabled) throw new AppError('not_found', 'Not Found');
        const found = await discover(f, p);
        if (req.action === 'discover_login') return redirect(found.loginUrl);
        return json(200, {
          org_id: found.org.id, org_name: found.org.name, display_name: found.org.displayName ?? null, protocol: found.protocol, login_url: found.loginUrl,
        });
      }
      case 'saml_metadata': {
        org = await enabledOrg(d, req.org);
        return { status: 200, body: await (await saml()).spMetadata(d, org, await activeSaml(d, org)), content_type: 'application/samlmetadata+xml; charset=utf-8' };
      }
      case 'saml_login': {
        org = await enabledOrg(d, req.org);
        const answer = await (await saml()).samlLogin(d, org, await activeSaml(d, org), loginParams(p));
        await f.audit(auditRecord(ctx, 'saml.login_initiated', { actor: ANONYMOUS, resourceType: 'org_saml_connection', resourceId: org.id, details: { org_id: org.id } }));
        return 'location' in answer ? redirect(answer.location) : { status: 200, body: answer.html, content_type: 'text/html; charset=utf-8' };
      }
      case 'saml_acs': {
        org = await enabledOrg(d, req.org);
        const c = await activeSaml(d, org);
        const login = await (await saml()).consumeSamlResponse(d, org, c, p);
        const out = await complete(f, ctx, org, login.identity, login.params);
        if (c.idpSloUrl && !out.error && login.session.nameID.length <= 1024) {
          ctx.setCookies.push(sloCookie(f, encrypt(d.secretKey, JSON.stringify({ c: c.id, ...login.session }), `saml_slo:${org.id}`), SLO_COOKIE_TTL_S));
        }
        await f.audit(auditRecord(ctx, out.error ? 'saml.acs_failed' : 'saml.acs_success', {
          actor: { type: 'user', id: out.userId, email: login.identity.email }, resourceType: 'org_saml_connection', resourceId: c.id,
          details: { org_id: org.id, created: out.created, idp_initiated: login.unsolicited, ...(out.error ? { error: out.error } : {}) },
        }));
        return redirect(out.redirectUrl);
      }
      case 'saml_logout_confirm': {
        org = await enabledOrg(d, req.org);
        const c = await activeSaml(d, org);
        if (!c.idpSloUrl) throw new AppError('failed_precondition', (await saml()).SLO_NOT_CONFIGURED);
        return { status: 200, body: logoutConfirmPage(d.baseUrl, org), content_type: 'text/html; charset=utf-8' };
      }
      case 'saml_logout': {
        org = await enabledOrg(d, req.org);
        const c = await activeSaml(d, org);
        const m = await saml();
        if (!c.idpSloUrl) throw new AppError('failed_precondition', m.SLO_NOT_CONFIGURED);
        const sealed = parseCookies(ctx.headers['cookie'])[ownCookieName(SLO_COOKIE, f.cookieSecure)] ?? '';
        ctx.setCookies.push(sloCookie(f, '', 0));
        let session: SamlModule.SamlSession & { c: string };
        try {
          session = JSON.parse(decrypt(d.secretKey, sealed, `saml_slo:${org.id}`)) as SamlModule.SamlSession & { c: string };
        } catch {
          throw new AppError('failed_precondition', 'no SAML session of this organization in this browser');
        }
        if (session.c !== c.id) throw new AppError('failed_precondition', 'no SAML session of this organization in this browser');
        const url = await m.samlLogoutUrl(d, org, c, session);
        await f.audit(auditRecord(ctx, 'saml.logout_initiated', { actor: ANONYMOUS, resourceType: 'org_saml_connection', resourceId: c.id, details: { org_id: org.id } }));
        return redirect(url);
      }
      case 'saml_slo': {
        org = await enabledOrg(d, req.org);
        const c = await activeSaml(d, org);
        await (await saml()).consumeLogoutResponse(d, org, c, p, p['__raw_query'] ?? '');
        await f.audit(auditRecord(ctx, 'saml.logout_completed', { actor: ANONYMOUS, resourceType: 'org_saml_connection', resourceId: c.id, details: { org_id: org.id } }));
        // signed out here and at the IdP: the hosted sign-in page
        return redirect(`${d.baseUrl}/app/login`);
      }
      case 'oidc_login': {
        org = await enabledOrg(d, req.org);
        const url = await (await oidc()).oidcLoginUrl(d, org, await activeOidc(d, org), loginParams(p));
        ctx.setCookies.push(stateCookie(f, new URL(url).searchParams.get('state') ?? '', PENDING_TTL_S));
        await f.audit(auditRecord(ctx, 'sso.login_initiated', { actor: ANONYMOUS, resourceType: 'org_oidc_connection', resourceId: org.id, details: { org_id: org.id } }));
        return redirect(url);
      }
      case 'oidc_callback': {
        org = await enabledOrg(d, req.org);
        const c = await activeOidc(d, org);
        const bound = parseCookies(ctx.headers['cookie'])[ownCookieName(STATE_COOKIE, f.cookieSecure)] ?? '';
        ctx.setCookies.push(stateCookie(f, '', 0));
        // checked before the pending login is taken: a foreign callback cannot use up the user's login
        if (bound === '' || !timingSafeEqualString(bound, p['state'] ?? '')) throw new SsoRejected('the login was not started in this browser');
        const login = await (await oidc()).oidcCallback(d, org, c, p);
        const out = await complete(f, ctx, org, login.identity, login.params);
        // §5.7 has no sso.callback_failed: authn's refusal is logged and reaches the app as `error`
        if (out.error) f.logger.info({ org: org.name, error: out.error }, 'sso login refused by authn');
        else {
          await f.audit(auditRecord(ctx, 'sso.callback_success', {
            actor: { type: 'user', id: out.userId, email: login.identity.email }, resourceType: 'org_oidc_connection', resourceId: c.id,
            details: { org_id: org.id, created: out.created },
          }));
        }
        return redirect(out.redirectUrl);
      }
      default:
        throw new AppError('not_found', 'Not Found');
    }
  } catch (err) {
    const e = toAppError(err);
    if (e.code === 'cancelled') throw e;
    if (req.action === 'saml_slo' && err instanceof SamlRejected) {
      await f.audit(auditRecord(ctx, 'saml.logout_failed', {
        actor: ANONYMOUS, resourceType: 'org_saml_connection', resourceId: org?.id, details: { org: req.org.slice(0, 255), reason: err.why },
      }));
    }
    if (req.action === 'saml_acs') {
      await f.audit(auditRecord(ctx, 'saml.acs_failed', {
        actor: ANONYMOUS, resourceType: 'org_saml_connection', resourceId: org?.id, details: { org: req.org.slice(0, 255), error: e.code, reason: err instanceof SamlRejected ? err.why : e.message },
      }));
    }
    if (e.code === 'internal') f.logger.error({ err, action: req.action }, 'sso request failed');
    else if (err instanceof SamlRejected || err instanceof SsoRejected) f.logger.info({ action: req.action, org: req.org, reason: err.why }, 'sso login refused');
    return json(httpStatusOf(e.code), { code: e.code, message: e.code === 'internal' ? 'internal error' : e.message });
  }
}
