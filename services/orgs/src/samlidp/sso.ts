/**
 * @module orgs/samlidp/sso
 * The SAML identity provider's browser endpoints (behaviour.md §5.9; issue 20 extension routes), as
 * the gateway forwards them (`OrgsService.SamlIdpRequest`):
 *
 * - `GET <url>/oauth/saml/<org name>/idp/metadata`: the IdP's EntityDescriptor (SAML Metadata §2.4.3,
 *   samlify), one signing KeyDescriptor per non-retired key (the current one first), the SSO service
 *   on HTTP-Redirect and HTTP-POST. The org's first key is created here when it has none.
 * - `GET|POST <url>/oauth/saml/<org name>/idp/sso`: SP-initiated Web SSO (SAML Profiles §4.1) with an
 *   AuthnRequest on HTTP-Redirect (deflated, query) or HTTP-POST (form), from a registered, active SP
 *   whose `AssertionConsumerServiceURL`, when given, equals its registered `acs_url`; or IdP-initiated
 *   (`?sp=<entity_id>[&RelayState=]`) when the SP has `allow_idp_initiated`.
 *
 * - `GET|POST <url>/oauth/saml/<org name>/idp/slo` (issue 31): SP-initiated Single Logout (SAML
 *   Profiles §4.4): a LogoutRequest (HTTP-Redirect or HTTP-POST) from a registered SP with an `slo_url`
 *   and a signing certificate, signed by it; the browser's Gatehouse session ends (when it is the
 *   NameID's user) and a signed LogoutResponse is POSTed to the SP's `slo_url` (Bindings §3.5).
 *
 * Issue 31: an SP registered with `sp_cert_pem` must sign its AuthnRequests (HTTP-Redirect: `SigAlg`
 * and `Signature` over the query, Bindings §3.4.4.1; HTTP-POST: an enveloped XML signature over the
 * request, §3.5.4), verified by samlify with that certificate; a signed request names this endpoint
 * as its `Destination` (§3.4.5.2, §3.5.5.2). Unsigned or badly signed → refused, the reason audited.
 * An SP registered with `sp_encryption_cert_pem` gets its assertion encrypted (SAML Core §2.3.4; XML
 * Encryption: AES-128-GCM content key, RSA-OAEP key transport), signed before encryption, with the
 * Response signed after.
 *
 * Without a Gatehouse session cookie the browser goes to the hosted login page (`/app/login`, which
 * runs the MFA gate of §4.1 before a session exists) with `return_to` pointing back here. The
 * signed-in user must be a member of the organization (an org-scoped IdP asserts its members only).
 * The answer is an auto-submitting HTML form that POSTs the signed Response (SAML Bindings §3.5,
 * HTTP-POST) to the SP's registered ACS: NameID per `name_id_format`, Audience = the SP's entity ID,
 * Recipient and Destination = its ACS, InResponseTo = the request's ID, NotOnOrAfter 5 minutes,
 * attributes per `mapped_attributes`; the Response and the Assertion are signed (RSA-SHA256, the
 * current key). A disabled organization refuses both endpoints.
 */
import { inflateRawSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import * as samlify from 'samlify';
import { auditRecord } from '@gatehouse/auth';
import { AppError } from '@gatehouse/errors';
import type { CallContext } from '@gatehouse/rpc';
import type { SamlIdpDeps } from './deps.ts';
import { publishedKeys, type SigningKey } from './keys.ts';
import { NAME_ID_FORMATS } from './providers.ts';
import type { ServiceProviderRecord } from './storage/ports.ts';
import type { Element as XmlElement } from '@xmldom/xmldom';
import { parseStrictXml } from './xml.ts';
import type { OrganizationRecord } from '../storage/ports.ts';

/** the assertion's lifetime: NotOnOrAfter = now + 5 minutes */
export const ASSERTION_TTL_SECONDS = 300;
/** the largest SAMLRequest accepted (encoded), and the largest inflated AuthnRequest */
const MAX_REQUEST_CHARS = 64 * 1024;
const MAX_INFLATED_BYTES = 256 * 1024;

const BINDING_POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const BINDING_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/**
 * samlify asks this before it reads any message: well-formed, no DOCTYPE (./xml.ts). The IdP reads
 * AuthnRequests and LogoutRequests, whose content it checks field by field (issuer registered, ACS
 * equal to the registered one); samlify verifies their signatures (see the module comment).
 */
samlify.setSchemaValidator({
  validate: async (xml: string) => {
    parseStrictXml(xml);
    return 'well-formed';
  },
});

/** The HTTP answer of one request (proto SamlIdpHttpResponse). */
export interface IdpHttpResponse {
  status: number;
  content_type: string;
  body: string;
  location?: string;
}

/** The forwarded request (proto SamlIdpHttpRequest). */
export interface IdpHttpRequest {
  org: string;
  endpoint: string;
  method: string;
  /** raw query string without `?` */
  query: string;
  /** raw `application/x-www-form-urlencoded` body of a POST */
  body: string;
}

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const samlId = (): string => `_${randomBytes(20).toString('hex')}`;

function page(status: number, title: string, message: string): IdpHttpResponse {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title></head>`
    + `<body><h1>${escapeXml(title)}</h1><p>${escapeXml(message)}</p></body></html>`;
  return { status, content_type: 'text/html; charset=utf-8', body };
}

/** A refusal shown to the browser; one naming its SP is recorded as `saml.idp_assertion_failed`. */
class Refusal extends Error {
  readonly status: number;
  readonly sp: ServiceProviderRecord | null;
  constructor(status: number, message: string, sp: ServiceProviderRecord | null = null) {
    super(message);
    this.status = status;
    this.sp = sp;
  }
}

const urls = (d: SamlIdpDeps, org: OrganizationRecord) => {
  const base = `${d.baseUrl}/oauth/saml/${encodeURIComponent(org.name)}/idp`;
  return { entityId: `${base}/metadata`, sso: `${base}/sso`, slo: `${base}/slo` };
};

/** XML Encryption 1.1 §5.2.4 AES-128-GCM (authenticated) and §5.5.2 RSA-OAEP: what the SPs we meet all decrypt. */
const DATA_ENCRYPTION = 'http://www.w3.org/2009/xmlenc11#aes128-gcm';
const KEY_ENCRYPTION = 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p';

/**
 * A samlify IdentityProvider publishing `certs` and signing with `signing`. With `sp`: the settings of
 * that SP (its NameID format; signed requests required when it has a signing certificate; assertions
 * encrypted when it has an encryption certificate).
 */
function idpEntity(d: SamlIdpDeps, org: OrganizationRecord, certs: string[], signing: SigningKey | null, sp?: ServiceProviderRecord) {
  const u = urls(d, org);
  return samlify.IdentityProvider({
    entityID: u.entityId,
    signingCert: certs.length === 1 ? certs[0]! : certs,
    ...(signing ? { privateKey: signing.keyPem } : {}),
    // the metadata is the org's, for every SP: which SP must sign is per registration (sp_cert_pem)
    wantAuthnRequestsSigned: Boolean(sp?.spCertPem),
    wantLogoutRequestSigned: true,
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    ...(sp?.spEncryptionCertPem ? { isAssertionEncrypted: true, dataEncryptionAlgorithm: DATA_ENCRYPTION, keyEncryptionAlgorithm: KEY_ENCRYPTION } : {}),
    nameIDFormat: sp ? [sp.nameIdFormat] : Object.values(NAME_ID_FORMATS),
    singleSignOnService: [{ Binding: BINDING_REDIRECT, Location: u.sso }, { Binding: BINDING_POST, Location: u.sso }],
    singleLogoutService: [{ Binding: BINDING_REDIRECT, Location: u.slo }, { Binding: BINDING_POST, Location: u.slo }],
  } as never);
}

/** A samlify ServiceProvider of a registered SP: its ACS, SLO endpoint and certificates. */
function spEntity(sp: ServiceProviderRecord) {
  return samlify.ServiceProvider({
    entityID: sp.entityId,
    assertionConsumerService: [{ Binding: BINDING_POST, Location: sp.acsUrl }],
    ...(sp.sloUrl ? { singleLogoutService: [{ Binding: BINDING_POST, Location: sp.sloUrl }] } : {}),
    ...(sp.spCertPem ? { signingCert: sp.spCertPem, authnRequestsSigned: true } : {}),
    ...(sp.spEncryptionCertPem ? { encryptCert: sp.spEncryptionCertPem } : {}),
    wantAssertionsSigned: true,
    wantMessageSigned: true,
    wantLogoutResponseSigned: true,
    nameIDFormat: [sp.nameIdFormat],
  } as never);
}

/** The signature algorithms accepted on the query of an HTTP-Redirect message (no SHA-1: RFC 6194). */
const QUERY_SIG_ALGS = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);

/** The raw (still percent-encoded) value of `name` in a query string, or null. */
function rawParam(query: string, name: string): string | null {
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    if ((eq === -1 ? part : part.slice(0, eq)) === name) return eq === -1 ? '' : part.slice(eq + 1);
  }
  return null;
}

/**
 * Verifies the signature of an SP's request with its registered signing certificate (samlify):
 * HTTP-Redirect over the octets `SAMLRequest=…[&RelayState=…]&SigAlg=…` as received (Bindings
 * §3.4.4.1), HTTP-POST the enveloped signature of the root element (§3.5.4, XML-DSig §3.2), whose
 * Reference must name the root's ID (no signature of some other element passes for the request's).
 * @param xml the decoded request
 * @throws Refusal 400 with the reason (missing signature, algorithm, verification failure)
 */
async function verifyRequestSignature(o: {
  idp: ReturnType<typeof idpEntity>; sp: ServiceProviderRecord; binding: 'redirect' | 'post'; kind: 'login' | 'logout';
  xml: string; params: Record<string, string>; rawQuery: string;
}): Promise<void> {
  const what = o.kind === 'login' ? 'AuthnRequest' : 'LogoutRequest';
  const spE = spEntity(o.sp);
  try {
    if (o.binding === 'redirect') {
      const sigAlg = o.params['SigAlg'];
      if (!o.params['Signature'] || !sigAlg) throw new Refusal(400, `the service provider must sign its ${what}: the request has no signature`, o.sp);
      if (!QUERY_SIG_ALGS.has(sigAlg)) throw new Refusal(400, `the ${what} is signed with an algorithm that is not accepted (${sigAlg.slice(0, 80)})`, o.sp);
      const raw = (name: string) => rawParam(o.rawQuery, name);
      const relay = raw('RelayState');
      const octetString = `SAMLRequest=${raw('SAMLRequest') ?? ''}${relay !== null ? `&RelayState=${relay}` : ''}&SigAlg=${raw('SigAlg') ?? ''}`;
      const request = { query: { SAMLRequest: o.params['SAMLRequest'], SigAlg: sigAlg, Signature: o.params['Signature'] }, octetString };
      await (o.kind === 'login' ? o.idp.parseLoginRequest(spE, 'redirect', request) : o.idp.parseLogoutRequest(spE, 'redirect', request));
      return;
    }
    const root = parseStrictXml(o.xml).documentElement;
    const sig = root ? Array.from(root.childNodes).find((n) => n.nodeType === 1 && (n as XmlElement).localName === 'Signature' && (n as XmlElement).namespaceURI === DSIG_NS) as XmlElement | undefined : undefined;
    if (!root || !sig) throw new Refusal(400, `the service provider must sign its ${what}: the request has no signature`, o.sp);
    const refs = Array.from(sig.getElementsByTagNameNS(DSIG_NS, 'Reference'));
    if (refs.length !== 1 || refs[0]!.getAttribute('URI') !== `#${root.getAttribute('ID') ?? ''}`) {
      throw new Refusal(400, `the ${what} signature does not cover the request`, o.sp);
    }
    const request = { body: { SAMLRequest: Buffer.from(o.xml, 'utf8').toString('base64') } };
    await (o.kind === 'login' ? o.idp.parseLoginRequest(spE, 'post', request) : o.idp.parseLogoutRequest(spE, 'post', request));
  } catch (err) {
    if (err instanceof Refusal) throw err;
    throw new Refusal(400, `the ${what} signature does not verify with the service provider's registered certificate`, o.sp);
  }
}

const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

/** The parsed AuthnRequest fields the IdP uses (SAML Core §3.4.1). */
interface AuthnRequestInfo {
  id: string;
  issuer: string;
  acsUrl: string | null;
  destination: string | null;
  /** the decoded request */
  xml: string;
}

/**
 * Decodes a SAMLRequest: HTTP-Redirect is base64 of raw DEFLATE (SAML Bindings §3.4.4.1), HTTP-POST
 * plain base64 (§3.5.4), or deflated as some SPs send it. @throws Refusal 400 when it is not readable XML
 */
function decodeRequest(encoded: string, binding: 'redirect' | 'post'): string {
  if (encoded.length > MAX_REQUEST_CHARS) throw new Refusal(400, 'the SAML request is too large');
  try {
    const raw = Buffer.from(encoded.replace(/\s+/g, ''), 'base64');
    // HTTP-POST carries plain XML; some SPs (node-saml among them) deflate it as for HTTP-Redirect
    const plain = binding === 'post' && /^\s*</.test(raw.subarray(0, 64).toString('utf8').replace(/^\uFEFF/, ''));
    const xml = (plain ? raw : inflateRawSync(raw, { maxOutputLength: MAX_INFLATED_BYTES })).toString('utf8');
    parseStrictXml(xml);
    return xml;
  } catch {
    throw new Refusal(400, 'the SAML request could not be read');
  }
}

/**
 * Decodes and reads an AuthnRequest.
 * @throws Refusal 400 for anything that is not a readable AuthnRequest
 */
function readAuthnRequest(encoded: string, binding: 'redirect' | 'post'): AuthnRequestInfo {
  const xml = decodeRequest(encoded, binding);
  const out = samlify.Extractor.extract(xml, samlify.Extractor.loginRequestFields) as {
    request?: { id?: string; assertionConsumerServiceUrl?: string; destination?: string } | null; issuer?: string | null;
  };
  const id = out.request?.id;
  const issuer = typeof out.issuer === 'string' ? out.issuer.trim() : '';
  if (!id || !issuer || parseStrictXml(xml).documentElement?.localName !== 'AuthnRequest') {
    throw new Refusal(400, 'the SAML request is not an AuthnRequest with an ID and an Issuer');
  }
  return { id, issuer, acsUrl: out.request?.assertionConsumerServiceUrl?.trim() || null, destination: out.request?.destination?.trim() || null, xml };
}

/** The user's values of the SP's `mapped_attributes` (user field → attribute name), as SAML Attributes. */
function attributeStatement(sp: ServiceProviderRecord, user: Record<string, unknown>): string {
  if (!sp.mappedAttributes) return '';
  const mapping = JSON.parse(sp.mappedAttributes) as Record<string, string>;
  const attrs: string[] = [];
  for (const [field, name] of Object.entries(mapping)) {
    const raw = user[field];
    const values = (Array.isArray(raw) ? raw : [raw]).filter((v) => typeof v === 'string' && v !== '' || typeof v === 'boolean' || typeof v === 'number').map(String);
    if (values.length === 0) continue;
    const format = name.includes(':') ? 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri' : 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic';
    attrs.push(`<saml:Attribute Name="${escapeXml(name)}" NameFormat="${format}">${values.map((v) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(v)}</saml:AttributeValue>`).join('')}</saml:Attribute>`);
  }
  return attrs.length === 0 ? '' : `<saml:AttributeStatement>${attrs.join('')}</saml:AttributeStatement>`;
}

/** The NameID of the user for the SP's format (SAML Core §8.3). @throws Refusal 400 when the user has no email for emailAddress */
function nameIdOf(sp: ServiceProviderRecord, user: { id: string; email?: string | null }): string {
  switch (sp.nameIdFormat) {
    case NAME_ID_FORMATS.persistent: return user.id;
    case NAME_ID_FORMATS.transient: return samlId();
    case NAME_ID_FORMATS.unspecified: return user.email || user.id;
    default:
      if (!user.email) throw new Refusal(400, 'your account has no email address, which this service provider needs', sp);
      return user.email;
  }
}

/** The unsigned Response with its Assertion (SAML Core §2.3.3, §3.3.3; Profiles §4.1.4.2). */
function responseXml(o: {
  idpEntityId: string; sp: ServiceProviderRecord; user: Record<string, unknown> & { id: string; email?: string | null };
  inResponseTo: string | null; now: number; authTime: number;
}): string {
  const exp = iso(o.now + ASSERTION_TTL_SECONDS);
  const inResponseTo = o.inResponseTo ? ` InResponseTo="${escapeXml(o.inResponseTo)}"` : '';
  const issuer = `<saml:Issuer>${escapeXml(o.idpEntityId)}</saml:Issuer>`;
  const acs = escapeXml(o.sp.acsUrl);
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${samlId()}" Version="2.0" IssueInstant="${iso(o.now)}" Destination="${acs}"${inResponseTo}>`
    + `${issuer}<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>`
    + `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${samlId()}" Version="2.0" IssueInstant="${iso(o.now)}">`
    + `${issuer}<saml:Subject><saml:NameID Format="${escapeXml(o.sp.nameIdFormat)}">${escapeXml(nameIdOf(o.sp, o.user))}</saml:NameID>`
    + `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${exp}" Recipient="${acs}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>`
    + `<saml:Conditions NotBefore="${iso(o.now)}" NotOnOrAfter="${exp}"><saml:AudienceRestriction><saml:Audience>${escapeXml(o.sp.entityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
    + `<saml:AuthnStatement AuthnInstant="${iso(o.authTime)}" SessionIndex="${samlId()}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
    + `${attributeStatement(o.sp, o.user)}</saml:Assertion></samlp:Response>`;
}

/** The auto-submitting form that carries a Response or LogoutResponse to the SP (SAML Bindings §3.5.4). */
function autoPost(acsUrl: string, samlResponse: string, relayState: string | null): string {
  const relay = relayState ? `<input type="hidden" name="RelayState" value="${escapeXml(relayState)}">` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signing in…</title></head><body>`
    + `<form method="post" action="${escapeXml(acsUrl)}"><input type="hidden" name="SAMLResponse" value="${escapeXml(samlResponse)}">${relay}`
    + `<noscript><p>Continue to the application.</p><button type="submit">Continue</button></noscript></form>`
    + `<script>document.forms[0].submit()</script></body></html>`;
}

/** The organization of the path; missing → 404, disabled → 403 (behaviour.md §6.1). */
async function orgOfPath(d: SamlIdpDeps, name: string): Promise<OrganizationRecord> {
  const org = name ? await d.orgs.byName(name) : null;
  if (!org) throw new Refusal(404, 'organization not found');
  if (!org.enabled) throw new Refusal(403, 'this organization is disabled');
  return org;
}

/** `/idp/metadata`: every non-retired key as a signing KeyDescriptor. */
async function metadata(d: SamlIdpDeps, org: OrganizationRecord): Promise<IdpHttpResponse> {
  const { published } = await publishedKeys(d, org.id);
  const xml = idpEntity(d, org, published.map((k) => k.certPem), null).getMetadata();
  return { status: 200, content_type: 'application/samlmetadata+xml; charset=utf-8', body: xml };
}

/**
 * The login page with `return_to` back to this endpoint (the `/authorize` contract of issue 18). `back`
 * is the query to come back with: a signed HTTP-Redirect request's query as received (its signature
 * covers those octets), else the parameters.
 */
function toLogin(d: SamlIdpDeps, org: OrganizationRecord, back: Record<string, string> | string): IdpHttpResponse {
  const basePath = new URL(d.baseUrl).pathname.replace(/\/+$/, '');
  const query = typeof back === 'string' ? back : new URLSearchParams(back).toString();
  const path = `${basePath}/oauth/saml/${encodeURIComponent(org.name)}/idp/sso?${query}`;
  return { status: 302, content_type: '', body: '', location: `${d.baseUrl}/app/login?return_to=${encodeURIComponent(path)}` };
}

/** `/idp/sso`: SP-initiated (SAMLRequest) or IdP-initiated (`sp`). */
async function sso(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, req: IdpHttpRequest, params: Record<string, string>): Promise<IdpHttpResponse> {
  const method = req.method.toUpperCase();
  const relayState = params['RelayState'] ?? null;
  if (relayState !== null && relayState.length > 1024) throw new Refusal(400, 'RelayState is too long');
  let sp: ServiceProviderRecord | null;
  let request: AuthnRequestInfo | null = null;
  let back: Record<string, string> | string;
  if (params['SAMLRequest']) {
    const binding = method === 'POST' || params['binding'] === 'post' ? 'post' : 'redirect';
    request = readAuthnRequest(params['SAMLRequest'], binding);
    sp = await d.store.providers.byEntityId(org.id, request.issuer);
    if (!sp || !sp.isActive) throw new Refusal(400, 'the service provider is not registered with this organization');
    if (sp.spCertPem) await verifyRequestSignature({ idp: idpEntity(d, org, [sp.spCertPem], null, sp), sp, binding, kind: 'login', xml: request.xml, params, rawQuery: req.query });
    if (request.acsUrl !== null && request.acsUrl !== sp.acsUrl) throw new Refusal(400, 'the AssertionConsumerServiceURL does not match the registered acs_url', sp);
    // Bindings §3.4.5.2 / §3.5.5.2: a signed request names where it was sent; an unsigned one may omit it
    if ((sp.spCertPem || request.destination !== null) && request.destination !== urls(d, org).sso) {
      throw new Refusal(400, 'the AuthnRequest Destination is not this endpoint', sp);
    }
    back = binding === 'redirect' && method === 'GET'
      ? req.query
      : { SAMLRequest: params['SAMLRequest'], ...(binding === 'post' ? { binding: 'post' } : {}), ...(relayState !== null ? { RelayState: relayState } : {}) };
  } else if (params['sp']) {
    sp = await d.store.providers.byEntityId(org.id, params['sp']);
    if (!sp || !sp.isActive) throw new Refusal(400, 'the service provider is not registered with this organization');
    if (!sp.allowIdpInitiated) throw new Refusal(403, 'IdP-initiated sign-on is not allowed for this service provider', sp);
    back = { sp: params['sp'], ...(relayState !== null ? { RelayState: relayState } : {}) };
  } else {
    throw new Refusal(400, 'SAMLRequest or sp is required');
  }

  const session = d.authenticator ? await d.authenticator.sessionFromCookies(ctx) : null;
  if (!session || session.loginMethod === 'client_credentials') return toLogin(d, org, back);
  if (!d.authn) throw new AppError('unavailable', 'authn service unavailable');
  let user;
  try {
    user = await d.authn.GetUser({ user_id: session.userId }, ctx);
  } catch (err) {
    if (err instanceof AppError && err.code === 'not_found') return toLogin(d, org, back);
    throw err;
  }
  if (user.revoked_timestamp) throw new Refusal(403, 'your access has been revoked', sp);
  if (!(await d.orgs.isMember(org.id, user.id))) throw new Refusal(403, 'you are not a member of this organization', sp);

  const { signing } = await publishedKeys(d, org.id);
  const now = d.now();
  const u = urls(d, org);
  const xml = responseXml({ idpEntityId: u.entityId, sp, user: user as never, inResponseTo: request?.id ?? null, now, authTime: session.authTime || now });
  const idp = idpEntity(d, org, [signing.certPem], signing, sp);
  // sign the assertion, encrypt it (when the SP registered an encryption certificate), sign the Response
  const signed = await idp.createLoginResponse(spEntity(sp), null as never, 'post', {}, {
    customTagReplacement: () => ({ id: '', context: xml }), encryptThenSign: Boolean(sp.spEncryptionCertPem),
  } as never);
  await d.audit(auditRecord(ctx, 'saml.idp_assertion_issued', {
    actor: { type: 'user', id: user.id, email: user.email ?? null }, resourceType: 'saml_service_provider', resourceId: sp.id,
    details: { org_id: org.id, entity_id: sp.entityId, flow: request ? 'sp_initiated' : 'idp_initiated', key_id: signing.id, encrypted: Boolean(sp.spEncryptionCertPem) },
  }));
  return { status: 200, content_type: 'text/html; charset=utf-8', body: autoPost(sp.acsUrl, String(signed.context), relayState) };
}

/** SAML Core §3.2.2.2 status codes of the LogoutResponse. */
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const STATUS_REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';

/**
 * `/idp/slo`: SP-initiated Single Logout (SAML Profiles §4.4.3, §4.4.4). The LogoutRequest's SP must be
 * registered and active, have an `slo_url` and a signing certificate, and have signed the request
 * (§4.4.4.1: the requester authenticates itself; an unsigned request could log anyone out); its
 * `Destination` must be this endpoint. The browser's Gatehouse session ends when its user is the
 * request's NameID (per the SP's NameID format; a transient NameID names the session's user), or there
 * is none: Success; a session of another user stays: `Requester` (Core §3.7.3.2). The answer is a
 * LogoutResponse signed with the current key, POSTed to the SP's `slo_url`, with `InResponseTo`.
 * This IdP sends no LogoutRequests of its own to the other SPs of the session (no propagation).
 */
async function slo(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, req: IdpHttpRequest, params: Record<string, string>): Promise<IdpHttpResponse> {
  const method = req.method.toUpperCase();
  const relayState = params['RelayState'] ?? null;
  if (relayState !== null && relayState.length > 1024) throw new Refusal(400, 'RelayState is too long');
  if (!params['SAMLRequest']) throw new Refusal(400, 'SAMLRequest (a LogoutRequest) is required');
  const binding = method === 'POST' ? 'post' : 'redirect';
  const xml = decodeRequest(params['SAMLRequest'], binding);
  const out = samlify.Extractor.extract(xml, samlify.Extractor.logoutRequestFields) as {
    request?: { id?: string; destination?: string } | null; issuer?: string | null; nameID?: string | null;
  };
  const id = out.request?.id;
  const issuer = typeof out.issuer === 'string' ? out.issuer.trim() : '';
  if (!id || !issuer || parseStrictXml(xml).documentElement?.localName !== 'LogoutRequest') {
    throw new Refusal(400, 'the SAML request is not a LogoutRequest with an ID and an Issuer');
  }
  const sp = await d.store.providers.byEntityId(org.id, issuer);
  if (!sp || !sp.isActive) throw new Refusal(400, 'the service provider is not registered with this organization');
  if (!sp.sloUrl) throw new Refusal(400, 'the service provider has no slo_url registered', sp);
  if (!sp.spCertPem) throw new Refusal(400, 'a LogoutRequest must be signed: the service provider has no signing certificate (sp_cert_pem) registered', sp);
  await verifyRequestSignature({ idp: idpEntity(d, org, [sp.spCertPem], null, sp), sp, binding, kind: 'logout', xml, params, rawQuery: req.query });
  if ((out.request?.destination?.trim() ?? '') !== urls(d, org).slo) throw new Refusal(400, 'the LogoutRequest Destination is not this endpoint', sp);

  const nameId = typeof out.nameID === 'string' ? out.nameID.trim() : '';
  const session = d.authenticator ? await d.authenticator.sessionFromCookies(ctx) : null;
  let status = STATUS_SUCCESS;
  let ended: string | null = null;
  if (session && session.loginMethod !== 'client_credentials') {
    if (!d.authn) throw new AppError('unavailable', 'authn service unavailable');
    const user = await d.authn.GetUser({ user_id: session.userId }, ctx).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'not_found') return null;
      throw err;
    });
    const named = !user || sp.nameIdFormat === NAME_ID_FORMATS.transient
      || nameId === user.id || (typeof user.email === 'string' && nameId.toLowerCase() === user.email.toLowerCase());
    if (named) {
      await d.authn.EndCookieSession({}, ctx);
      ended = session.userId;
    } else {
      status = STATUS_REQUESTER;
    }
  }

  const { signing } = await publishedKeys(d, org.id);
  const idp = idpEntity(d, org, [signing.certPem], signing, sp);
  const spE = spEntity(sp);
  const response = idp.createLogoutResponse(spE, { extract: { request: { id } } } as never, 'post', {
    relayState: relayState ?? '',
    customTagReplacement: (template: string) => {
      const responseId = samlId();
      // samlify's template with its {Tag} placeholders, filled with XML-escaped values (as samlify's own filler does)
      const values: Record<string, string> = {
        ID: responseId, Issuer: urls(d, org).entityId, IssueInstant: iso(d.now()), StatusCode: status, InResponseTo: id, Destination: sp.sloUrl!,
      };
      return { id: responseId, context: template.replace(/\{(\w+)\}/g, (_m, tag: string) => escapeXml(values[tag] ?? '')) };
    },
  } as never) as { context: string };
  await d.audit(auditRecord(ctx, 'saml.idp_logout', {
    actor: { type: 'user', id: ended ?? session?.userId ?? null }, resourceType: 'saml_service_provider', resourceId: sp.id,
    details: { org_id: org.id, entity_id: sp.entityId, session_ended: ended !== null, status, key_id: signing.id },
  }));
  return { status: 200, content_type: 'text/html; charset=utf-8', body: autoPost(sp.sloUrl, String(response.context), relayState) };
}

/** Reads the query and (POST) the form body: the first value of each parameter wins, the body's first. */
function paramsOf(req: IdpHttpRequest): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (raw: string): void => {
    for (const [k, v] of new URLSearchParams(raw)) if (!(k in out)) out[k] = v;
  };
  if (req.method === 'POST') put(req.body);
  put(req.query);
  return out;
}

/**
 * One browser request to the IdP (see the module comment). Refusals are HTML pages with the reason
 * (and `saml.idp_assertion_failed` once the SP is known); storage or peer failures are thrown.
 */
export async function handleIdpRequest(d: SamlIdpDeps, ctx: CallContext, req: IdpHttpRequest): Promise<IdpHttpResponse> {
  const method = req.method.toUpperCase();
  const allowed = req.endpoint === 'metadata' ? ['GET'] : req.endpoint === 'sso' || req.endpoint === 'slo' ? ['GET', 'POST'] : [];
  if (allowed.length === 0) return page(404, 'Not found', 'no such SAML endpoint');
  if (!allowed.includes(method)) return page(405, 'Method not allowed', `use ${allowed.join(' or ')}`);
  try {
    const org = await orgOfPath(d, req.org);
    if (req.endpoint === 'metadata') return await metadata(d, org);
    if (req.endpoint === 'slo') return await slo(d, ctx, org, req, paramsOf(req));
    return await sso(d, ctx, org, req, paramsOf(req));
  } catch (err) {
    if (!(err instanceof Refusal)) throw err;
    if (err.sp) {
      await d.audit(auditRecord(ctx, req.endpoint === 'slo' ? 'saml.idp_logout_failed' : 'saml.idp_assertion_failed', {
        actor: { type: 'user', id: null }, resourceType: 'saml_service_provider', resourceId: err.sp.id,
        details: { org_id: err.sp.orgId, entity_id: err.sp.entityId, reason: err.message },
      }));
    }
    return page(err.status, req.endpoint === 'slo' ? 'Single logout failed' : 'Single sign-on failed', err.message);
  }
}
