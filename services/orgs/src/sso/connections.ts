/**
 * @module orgs/sso/connections
 * The SSO connection administration of behaviour.md §6.3: one OIDC and one SAML connection per
 * organization, validated and stored; the OIDC client secret sealed with AES-256-GCM under
 * `--encryption-key` (bound by associated data to the connection id) and the IdP certificate kept as
 * PEM, both write-only. Defaults that name the org (`redirect_uri`, `sp_entity_id`, `acs_url`) are
 * stored as null and computed on read, so a rename moves them (§6.1).
 */
import { randomUUID, X509Certificate } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import { decrypt, encrypt } from '@gatehouse/crypto';
import { isUuid, ORGANIZATION_NOT_FOUND } from '../domain/members.ts';
import { noEvents, type EventsOf, type OrganizationRecord } from '../storage/ports.ts';
import type { SsoDeps } from './deps.ts';
import { newSpKey } from './sp-keys.ts';
import type { OidcConnectionRecord, SamlBinding, SamlConnectionRecord } from './storage/ports.ts';

export const DEFAULT_OIDC_SCOPES = 'openid profile email';
export const OIDC_EXISTS = 'an OIDC connection already exists for this organization';
export const SAML_EXISTS = 'a SAML connection already exists for this organization';
export const OIDC_NOT_FOUND = 'OIDC connection not found';
export const SAML_NOT_FOUND = 'SAML connection not found';
export const OIDC_DELETED = 'OIDC connection deleted';
export const SAML_DELETED = 'SAML connection deleted';
export const EITHER_ID = 'supply either id or org_id';
export const ISSUER_HTTPS = 'issuer_url must be a valid https URL';
export const CERT_PEM = 'idp_certificate must be a PEM-encoded X.509 certificate';

/** Longest accepted values (characters): larger input is refused with `<field> is too long`. */
const MAX = { name: 255, url: 2048, clientId: 512, secret: 4096, scopes: 1024, cert: 65_536, mapping: 8192 } as const;

const blank = (v: string | null | undefined): boolean => v === undefined || v === null || v.trim() === '';

/** @throws AppError `invalid_argument` `<field> is too long` */
function bounded(field: string, v: string, max: number): string {
  if (v.length > max) throw new AppError('invalid_argument', `${field} is too long`);
  return v;
}

/** @throws AppError `invalid_argument` `<field> is required` / too long */
function required(field: string, v: string | null | undefined, max: number): string {
  if (blank(v)) throw new AppError('invalid_argument', `${field} is required`);
  return bounded(field, v!.trim(), max);
}

/** A URL of one of `schemes`, else `message`. */
function urlOf(v: string, schemes: readonly string[], message: string): string {
  const s = bounded(message.split(' ')[0]!, v.trim(), MAX.url);
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new AppError('invalid_argument', message);
  }
  if (!schemes.includes(u.protocol) || u.hostname === '' || u.username !== '' || u.password !== '') throw new AppError('invalid_argument', message);
  return s;
}

/** `issuer_url`: https, without a trailing slash difference (§6.3). */
export const checkIssuer = (v: string | null | undefined): string => urlOf(v ?? '', ['https:'], ISSUER_HTTPS);
const checkIdpSsoUrl = (v: string | null | undefined): string => urlOf(v ?? '', ['https:'], 'idp_sso_url must be a valid https URL');
const checkIdpSloUrl = (v: string): string => urlOf(v, ['https:'], 'idp_slo_url must be a valid https URL');
const checkOwnUrl = (field: string) => (v: string): string => urlOf(v, ['https:', 'http:'], `${field} must be a valid http(s) URL`);

/**
 * The IdP certificate as PEM: exactly one X.509 certificate, re-encoded (§6.3).
 * @throws AppError `invalid_argument` `idp_certificate must be a PEM-encoded X.509 certificate`
 */
export function checkCertificate(v: string | null | undefined): string {
  const s = bounded('idp_certificate', (v ?? '').trim(), MAX.cert);
  const blocks = s.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  if (!blocks || blocks.length !== 1) throw new AppError('invalid_argument', CERT_PEM);
  try {
    return new X509Certificate(blocks[0]!).toString().trim();
  } catch {
    throw new AppError('invalid_argument', CERT_PEM);
  }
}

/**
 * `attribute_mapping`: a JSON object whose values are strings (our field → the SAML attribute name).
 * @throws AppError `invalid_argument` `attribute_mapping must be a JSON object of strings`
 */
export function checkMapping(v: string): string {
  const message = 'attribute_mapping must be a JSON object of strings';
  bounded('attribute_mapping', v, MAX.mapping);
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    throw new AppError('invalid_argument', message);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) || !Object.values(parsed).every((x) => typeof x === 'string')) {
    throw new AppError('invalid_argument', message);
  }
  return JSON.stringify(parsed);
}

/** An optional string: undefined/null = not supplied, blank = clear (null), else the checked value. */
function optional<T>(v: string | null | undefined, check: (s: string) => T): T | null | undefined {
  if (v === undefined || v === null) return undefined;
  return v.trim() === '' ? null : check(v.trim());
}

/** @throws AppError `not_found` `organization not found` */
async function orgOf(d: SsoDeps, raw: string | null | undefined): Promise<OrganizationRecord> {
  const id = (raw ?? '').trim().toLowerCase();
  if (id === '') throw new AppError('invalid_argument', 'org_id is required');
  const org = isUuid(id) ? await d.orgs.organizations.get(id) : null;
  if (!org) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  return org;
}

const sealSecret = (d: SsoDeps, id: string, secret: string): string => encrypt(d.secretKey, secret, `org_oidc_connection:${id}`);

/** The upstream client secret of a connection (for the token request of the login flow). */
export const openSecret = (d: SsoDeps, c: OidcConnectionRecord): string => decrypt(d.secretKey, c.clientSecretSealed, `org_oidc_connection:${c.id}`);

export interface CreateOidcInput {
  orgId?: string | null; name?: string | null; issuerUrl?: string | null; clientId?: string | null; clientSecret?: string | null;
  scopes?: string | null; redirectUri?: string | null;
}

/** Scopes as stored: whitespace-separated tokens, de-duplicated; `openid` must be among them. */
function checkScopes(v: string): string {
  const list = [...new Set(bounded('scopes', v, MAX.scopes).split(/[\s,]+/).filter(Boolean))];
  if (!list.includes('openid')) throw new AppError('invalid_argument', 'scopes must include openid');
  return list.join(' ');
}

/**
 * `create_org_oidc_connection` (§6.3).
 * @throws AppError `invalid_argument` (the field messages), `not_found` `organization not found`,
 *   `already_exists` `an OIDC connection already exists for this organization` / `issuer_url already registered: <url>`
 */
export async function createOidcConnection(d: SsoDeps, input: CreateOidcInput, events: EventsOf<OidcConnectionRecord> = noEvents): Promise<OidcConnectionRecord> {
  const org = await orgOf(d, input.orgId);
  const name = required('name', input.name, MAX.name);
  const issuerUrl = checkIssuer(input.issuerUrl);
  const clientId = required('client_id', input.clientId, MAX.clientId);
  if (blank(input.clientSecret)) throw new AppError('invalid_argument', 'client_secret is required');
  const secret = bounded('client_secret', input.clientSecret!, MAX.secret);
  const scopes = optional(input.scopes, checkScopes) ?? null;
  const redirectUri = optional(input.redirectUri, checkOwnUrl('redirect_uri')) ?? null;
  if (await d.store.oidc.byOrg(org.id)) throw new AppError('already_exists', OIDC_EXISTS);
  if (await d.store.oidc.byIssuer(issuerUrl)) throw new AppError('already_exists', `issuer_url already registered: ${issuerUrl}`);
  const now = d.now();
  const id = randomUUID();
  const record: OidcConnectionRecord = {
    id, orgId: org.id, name, issuerUrl, clientId, clientSecretSealed: sealSecret(d, id, secret), scopes, redirectUri, isActive: true, createdAt: now, updatedAt: now,
  };
  const out = await d.store.oidc.insert(record, events(record));
  if (out === 'org') throw new AppError('already_exists', OIDC_EXISTS);
  if (out === 'issuer') throw new AppError('already_exists', `issuer_url already registered: ${issuerUrl}`);
  return record;
}

export interface UpdateOidcInput extends Omit<CreateOidcInput, 'orgId'> {
  id?: string | null;
  isActive?: boolean | null;
}

/** @throws AppError `not_found` `OIDC connection not found` */
async function oidcById(d: SsoDeps, raw: string | null | undefined): Promise<OidcConnectionRecord> {
  const id = (raw ?? '').trim().toLowerCase();
  if (id === '') throw new AppError('invalid_argument', 'id is required');
  const c = isUuid(id) ? await d.store.oidc.byId(id) : null;
  if (!c) throw new AppError('not_found', OIDC_NOT_FOUND);
  return c;
}

/**
 * `update_org_oidc_connection` (§6.3): only supplied fields change; a blank `client_secret` keeps the
 * stored one; a blank `scopes` / `redirect_uri` returns to the default.
 * @throws AppError as {@link createOidcConnection}; `not_found` `OIDC connection not found`
 */
export async function updateOidcConnection(d: SsoDeps, input: UpdateOidcInput, events: EventsOf<OidcConnectionRecord> = noEvents): Promise<OidcConnectionRecord> {
  const c = await oidcById(d, input.id);
  const next: OidcConnectionRecord = { ...c };
  if (input.name != null) next.name = required('name', input.name, MAX.name);
  if (input.issuerUrl != null) next.issuerUrl = checkIssuer(input.issuerUrl);
  if (input.clientId != null) next.clientId = required('client_id', input.clientId, MAX.clientId);
  if (!blank(input.clientSecret)) next.clientSecretSealed = sealSecret(d, c.id, bounded('client_secret', input.clientSecret!, MAX.secret));
  const scopes = optional(input.scopes, checkScopes);
  if (scopes !== undefined) next.scopes = scopes;
  const redirectUri = optional(input.redirectUri, checkOwnUrl('redirect_uri'));
  if (redirectUri !== undefined) next.redirectUri = redirectUri;
  if (input.isActive != null) next.isActive = input.isActive;
  if (next.issuerUrl !== c.issuerUrl) {
    const other = await d.store.oidc.byIssuer(next.issuerUrl);
    if (other && other.id !== c.id) throw new AppError('already_exists', `issuer_url already registered: ${next.issuerUrl}`);
  }
  next.updatedAt = d.now();
  if ((await d.store.oidc.update(next, events(next))) === 'issuer') throw new AppError('already_exists', `issuer_url already registered: ${next.issuerUrl}`);
  return next;
}

/** The addressing of get/delete: exactly one of `id`, `org_id` (§6.3). */
export interface ConnectionRef { id?: string | null; orgId?: string | null }

/** @throws AppError `invalid_argument` `supply either id or org_id` */
function refOf(ref: ConnectionRef): { id: string } | { orgId: string } {
  const id = (ref.id ?? '').trim().toLowerCase();
  const orgId = (ref.orgId ?? '').trim().toLowerCase();
  if ((id === '') === (orgId === '')) throw new AppError('invalid_argument', EITHER_ID);
  return id !== '' ? { id } : { orgId };
}

/** `org_oidc_connection` (§6.3). @throws AppError `invalid_argument` `supply either id or org_id`; `not_found` */
export async function getOidcConnection(d: SsoDeps, ref: ConnectionRef): Promise<OidcConnectionRecord> {
  const r = refOf(ref);
  const key = 'id' in r ? r.id : r.orgId;
  const c = !isUuid(key) ? null : 'id' in r ? await d.store.oidc.byId(r.id) : await d.store.oidc.byOrg(r.orgId);
  if (!c) throw new AppError('not_found', OIDC_NOT_FOUND);
  return c;
}

/** `delete_org_oidc_connection` (§6.3). @throws as {@link getOidcConnection} */
export async function deleteOidcConnection(d: SsoDeps, ref: ConnectionRef, events: EventsOf<OidcConnectionRecord> = noEvents): Promise<OidcConnectionRecord> {
  const c = await getOidcConnection(d, ref);
  if (!(await d.store.oidc.delete(c.id, events(c)))) throw new AppError('not_found', OIDC_NOT_FOUND);
  return c;
}

export interface CreateSamlInput {
  orgId?: string | null; name?: string | null; idpEntityId?: string | null; idpSsoUrl?: string | null; idpCertificate?: string | null;
  spEntityId?: string | null; acsUrl?: string | null; attributeMapping?: string | null; allowIdpInitiated?: boolean | null;
  /** `HTTP-Redirect` (default) or `HTTP-POST` */
  idpSsoBinding?: string | null;
  /** the IdP's SingleLogoutService (https, HTTP-Redirect) */
  idpSloUrl?: string | null;
}

export const SSO_BINDING = 'idp_sso_binding must be HTTP-Redirect or HTTP-POST';

/** `idp_sso_binding` (SAML Bindings §3.4 / §3.5). @throws AppError `invalid_argument` {@link SSO_BINDING} */
function checkBinding(v: string): SamlBinding {
  if (v !== 'HTTP-Redirect' && v !== 'HTTP-POST') throw new AppError('invalid_argument', SSO_BINDING);
  return v;
}

const checkEntityId = (v: string): string => bounded('sp_entity_id', v, MAX.url);

/**
 * `create_org_saml_connection` (§6.3).
 * @throws AppError `invalid_argument` (the field messages), `not_found` `organization not found`,
 *   `already_exists` `a SAML connection already exists for this organization` / `idp_entity_id already registered: <id>`
 */
export async function createSamlConnection(d: SsoDeps, input: CreateSamlInput, events: EventsOf<SamlConnectionRecord> = noEvents): Promise<SamlConnectionRecord> {
  const org = await orgOf(d, input.orgId);
  const name = required('name', input.name, MAX.name);
  const idpEntityId = required('idp_entity_id', input.idpEntityId, MAX.url);
  const idpSsoUrl = checkIdpSsoUrl(input.idpSsoUrl);
  const idpCertificate = checkCertificate(input.idpCertificate);
  const spEntityId = optional(input.spEntityId, checkEntityId) ?? null;
  const acsUrl = optional(input.acsUrl, checkOwnUrl('acs_url')) ?? null;
  const attributeMapping = optional(input.attributeMapping, checkMapping) ?? null;
  const idpSsoBinding = optional(input.idpSsoBinding, checkBinding) ?? 'HTTP-Redirect';
  const idpSloUrl = optional(input.idpSloUrl, checkIdpSloUrl) ?? null;
  if (await d.store.saml.byOrg(org.id)) throw new AppError('already_exists', SAML_EXISTS);
  if (await d.store.saml.byEntityId(idpEntityId)) throw new AppError('already_exists', `idp_entity_id already registered: ${idpEntityId}`);
  const now = d.now();
  const id = randomUUID();
  const record: SamlConnectionRecord = {
    id, orgId: org.id, name, idpEntityId, idpSsoUrl, idpCertificate, spEntityId, acsUrl, attributeMapping,
    allowIdpInitiated: input.allowIdpInitiated ?? false, isActive: true, createdAt: now, updatedAt: now, idpSsoBinding, idpSloUrl,
    // issue 31 §1: our signing / decryption key pair of this connection
    ...(await newSpKey(d, id)),
  };
  const out = await d.store.saml.insert(record, events(record));
  if (out === 'org') throw new AppError('already_exists', SAML_EXISTS);
  if (out === 'entity') throw new AppError('already_exists', `idp_entity_id already registered: ${idpEntityId}`);
  return record;
}

export interface UpdateSamlInput extends Omit<CreateSamlInput, 'orgId'> {
  id?: string | null;
  isActive?: boolean | null;
}

/**
 * `update_org_saml_connection` (§6.3): only supplied fields change; a blank certificate keeps the
 * stored one; a blank `sp_entity_id` / `acs_url` / `attribute_mapping` returns to the default.
 * @throws AppError as {@link createSamlConnection}; `not_found` `SAML connection not found`
 */
export async function updateSamlConnection(d: SsoDeps, input: UpdateSamlInput, events: EventsOf<SamlConnectionRecord> = noEvents): Promise<SamlConnectionRecord> {
  const id = (input.id ?? '').trim().toLowerCase();
  if (id === '') throw new AppError('invalid_argument', 'id is required');
  const c = isUuid(id) ? await d.store.saml.byId(id) : null;
  if (!c) throw new AppError('not_found', SAML_NOT_FOUND);
  const next: SamlConnectionRecord = { ...c };
  if (input.name != null) next.name = required('name', input.name, MAX.name);
  if (input.idpEntityId != null) next.idpEntityId = required('idp_entity_id', input.idpEntityId, MAX.url);
  if (input.idpSsoUrl != null) next.idpSsoUrl = checkIdpSsoUrl(input.idpSsoUrl);
  if (!blank(input.idpCertificate)) next.idpCertificate = checkCertificate(input.idpCertificate);
  for (const [key, value, check] of [
    ['spEntityId', input.spEntityId, checkEntityId], ['acsUrl', input.acsUrl, checkOwnUrl('acs_url')], ['attributeMapping', input.attributeMapping, checkMapping],
  ] as const) {
    const v = optional(value, check);
    if (v !== undefined) next[key] = v;
  }
  if (input.allowIdpInitiated != null) next.allowIdpInitiated = input.allowIdpInitiated;
  if (input.isActive != null) next.isActive = input.isActive;
  const binding = optional(input.idpSsoBinding, checkBinding);
  if (binding !== undefined) next.idpSsoBinding = binding ?? 'HTTP-Redirect';
  const slo = optional(input.idpSloUrl, checkIdpSloUrl);
  if (slo !== undefined) next.idpSloUrl = slo;
  if (next.idpEntityId !== c.idpEntityId) {
    const other = await d.store.saml.byEntityId(next.idpEntityId);
    if (other && other.id !== c.id) throw new AppError('already_exists', `idp_entity_id already registered: ${next.idpEntityId}`);
  }
  next.updatedAt = d.now();
  if ((await d.store.saml.update(next, events(next))) === 'entity') throw new AppError('already_exists', `idp_entity_id already registered: ${next.idpEntityId}`);
  return next;
}

/** `org_saml_connection` (§6.3). @throws AppError `invalid_argument` `supply either id or org_id`; `not_found` */
export async function getSamlConnection(d: SsoDeps, ref: ConnectionRef): Promise<SamlConnectionRecord> {
  const r = refOf(ref);
  const key = 'id' in r ? r.id : r.orgId;
  const c = !isUuid(key) ? null : 'id' in r ? await d.store.saml.byId(r.id) : await d.store.saml.byOrg(r.orgId);
  if (!c) throw new AppError('not_found', SAML_NOT_FOUND);
  return c;
}

/** `delete_org_saml_connection` (§6.3). @throws as {@link getSamlConnection} */
export async function deleteSamlConnection(d: SsoDeps, ref: ConnectionRef, events: EventsOf<SamlConnectionRecord> = noEvents): Promise<SamlConnectionRecord> {
  const c = await getSamlConnection(d, ref);
  if (!(await d.store.saml.delete(c.id, events(c)))) throw new AppError('not_found', SAML_NOT_FOUND);
  return c;
}

/** The org's URLs under `--url` (§6.3 defaults): they follow a rename (§6.1). */
export const ssoUrls = (d: Pick<SsoDeps, 'baseUrl'>, orgName: string) => {
  const org = encodeURIComponent(orgName);
  return {
    oidcCallback: `${d.baseUrl}/oauth/sso/${org}/callback`,
    samlMetadata: `${d.baseUrl}/oauth/saml/${org}/metadata`,
    samlAcs: `${d.baseUrl}/oauth/saml/${org}/acs`,
    /** our SingleLogoutService: the IdP's LogoutResponse (HTTP-Redirect) */
    samlSlo: `${d.baseUrl}/oauth/saml/${org}/slo`,
  };
};

/** The effective redirect URI / SP entity id / ACS URL of a connection of the org named `orgName`. */
export const effectiveOidc = (d: Pick<SsoDeps, 'baseUrl'>, c: OidcConnectionRecord, orgName: string) => ({
  scopes: c.scopes ?? DEFAULT_OIDC_SCOPES, redirectUri: c.redirectUri ?? ssoUrls(d, orgName).oidcCallback,
});
export const effectiveSaml = (d: Pick<SsoDeps, 'baseUrl'>, c: SamlConnectionRecord, orgName: string) => ({
  spEntityId: c.spEntityId ?? ssoUrls(d, orgName).samlMetadata, acsUrl: c.acsUrl ?? ssoUrls(d, orgName).samlAcs,
});
