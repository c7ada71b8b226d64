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
 *   NameID's user) and is propagated on the front channel (§4.4.3.3, as Keycloak and Shibboleth IdP do):
 *   every SP an assertion was issued to in that browser session (its session participants, recorded
 *   with the NameID and SessionIndex at each sign-on) gets a LogoutRequest signed with the IdP key on
 *   HTTP-Redirect in turn, and its LogoutResponse comes back here (Issuer, InResponseTo, status and,
 *   when the SP registered a certificate, its signature checked). Last, a signed LogoutResponse is POSTed
 *   to the initiator's `slo_url` (Bindings §3.5): `Success`, or `PartialLogout` when a participant
 *   answered otherwise, failed the checks or could not be reached (Core §3.7.3.2).
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
import type { ServiceProviderRecord, SessionParticipantRecord } from './storage/ports.ts';
import type { SessionRecord } from '@gatehouse/auth';
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
    // issue 31: the LogoutResponses of the SPs this IdP sent a LogoutRequest to (checked when the SP has a certificate)
    wantLogoutResponseSigned: true,
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    ...(sp?.spEncryptionCertPem ? { isAssertionEncrypted: true, dataEncryptionAlgorithm: DATA_ENCRYPTION, keyEncryptionAlgorithm: KEY_ENCRYPTION } : {}),
    nameIDFormat: sp ? [sp.nameIdFormat] : Object.values(NAME_ID_FORMATS),
    singleSignOnService: [{ Binding: BINDING_REDIRECT, Location: u.sso }, { Binding: BINDING_POST, Location: u.sso }],
    singleLogoutService: [{ Binding: BINDING_REDIRECT, Location: u.slo }, { Binding: BINDING_POST, Location: u.slo }],
  } as never);
}

/**
 * A samlify ServiceProvider of a registered SP: its ACS, SLO endpoint (both bindings: the IdP POSTs its
 * LogoutResponses and redirects its LogoutRequests there) and certificates. `wantLogoutRequestSigned`:
 * the LogoutRequests the IdP sends it are signed (issue 31).
 */
function spEntity(sp: ServiceProviderRecord) {
  return samlify.ServiceProvider({
    entityID: sp.entityId,
    assertionConsumerService: [{ Binding: BINDING_POST, Location: sp.acsUrl }],
    ...(sp.sloUrl ? { singleLogoutService: [{ Binding: BINDING_POST, Location: sp.sloUrl }, { Binding: BINDING_REDIRECT, Location: sp.sloUrl }] } : {}),
    wantLogoutRequestSigned: true,
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

/** The SP messages whose signatures the IdP checks: AuthnRequests, LogoutRequests and (issue 31) LogoutResponses. */
type SpMessageKind = 'login' | 'logout' | 'logout-response';
const MESSAGE_NAMES: Record<SpMessageKind, string> = { login: 'AuthnRequest', logout: 'LogoutRequest', 'logout-response': 'LogoutResponse' };

/**
 * Verifies the signature of an SP's message with its registered signing certificate (samlify):
 * HTTP-Redirect over the octets `SAMLRequest=…[&RelayState=…]&SigAlg=…` (`SAMLResponse=…` for a
 * LogoutResponse) as received (Bindings §3.4.4.1), HTTP-POST the enveloped signature of the root
 * element (§3.5.4, XML-DSig §3.2), whose Reference must name the root's ID (no signature of some other
 * element passes for the message's). samlify also compares a LogoutResponse's Issuer with the SP's
 * entity ID, and refuses a LogoutResponse whose status is not Success (the caller reads it first).
 * @param xml the decoded message
 * @throws Refusal 400 with the reason (missing signature, algorithm, verification failure)
 */
async function verifyRequestSignature(o: {
  idp: ReturnType<typeof idpEntity>; sp: ServiceProviderRecord; binding: 'redirect' | 'post'; kind: SpMessageKind;
  xml: string; params: Record<string, string>; rawQuery: string;
}): Promise<void> {
  const what = MESSAGE_NAMES[o.kind];
  const [param, noun] = o.kind === 'logout-response' ? ['SAMLResponse', 'response'] : ['SAMLRequest', 'request'];
  const spE = spEntity(o.sp);
  const parse = (binding: 'redirect' | 'post', message: unknown): Promise<unknown> => o.kind === 'login'
    ? o.idp.parseLoginRequest(spE, binding, message as never)
    : o.kind === 'logout' ? o.idp.parseLogoutRequest(spE, binding, message as never) : o.idp.parseLogoutResponse(spE, binding, message as never);
  try {
    if (o.binding === 'redirect') {
      const sigAlg = o.params['SigAlg'];
      if (!o.params['Signature'] || !sigAlg) throw new Refusal(400, `the service provider must sign its ${what}: the ${noun} has no signature`, o.sp);
      if (!QUERY_SIG_ALGS.has(sigAlg)) throw new Refusal(400, `the ${what} is signed with an algorithm that is not accepted (${sigAlg.slice(0, 80)})`, o.sp);
      const raw = (name: string) => rawParam(o.rawQuery, name);
      const relay = raw('RelayState');
      const octetString = `${param}=${raw(param) ?? ''}${relay !== null ? `&RelayState=${relay}` : ''}&SigAlg=${raw('SigAlg') ?? ''}`;
      await parse('redirect', { query: { [param]: o.params[param], SigAlg: sigAlg, Signature: o.params['Signature'] }, octetString });
      return;
    }
    const root = parseStrictXml(o.xml).documentElement;
    const sig = root ? Array.from(root.childNodes).find((n) => n.nodeType === 1 && (n as XmlElement).localName === 'Signature' && (n as XmlElement).namespaceURI === DSIG_NS) as XmlElement | undefined : undefined;
    if (!root || !sig) throw new Refusal(400, `the service provider must sign its ${what}: the ${noun} has no signature`, o.sp);
    const refs = Array.from(sig.getElementsByTagNameNS(DSIG_NS, 'Reference'));
    if (refs.length !== 1 || refs[0]!.getAttribute('URI') !== `#${root.getAttribute('ID') ?? ''}`) {
      throw new Refusal(400, `the ${what} signature does not cover the ${noun}`, o.sp);
    }
    await parse('post', { body: { [param]: Buffer.from(o.xml, 'utf8').toString('base64') } });
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
function decodeRequest(encoded: string, binding: 'redirect' | 'post', noun: 'request' | 'response' = 'request'): string {
  if (encoded.length > MAX_REQUEST_CHARS) throw new Refusal(400, `the SAML ${noun} is too large`);
  try {
    const raw = Buffer.from(encoded.replace(/\s+/g, ''), 'base64');
    // HTTP-POST carries plain XML; some SPs (node-saml among them) deflate it as for HTTP-Redirect
    const plain = binding === 'post' && /^\s*</.test(raw.subarray(0, 64).toString('utf8').replace(/^\uFEFF/, ''));
    const xml = (plain ? raw : inflateRawSync(raw, { maxOutputLength: MAX_INFLATED_BYTES })).toString('utf8');
    parseStrictXml(xml);
    return xml;
  } catch {
    throw new Refusal(400, `the SAML ${noun} could not be read`);
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
  inResponseTo: string | null; now: number; authTime: number; nameId: string; sessionIndex: string;
}): string {
  const exp = iso(o.now + ASSERTION_TTL_SECONDS);
  const inResponseTo = o.inResponseTo ? ` InResponseTo="${escapeXml(o.inResponseTo)}"` : '';
  const issuer = `<saml:Issuer>${escapeXml(o.idpEntityId)}</saml:Issuer>`;
  const acs = escapeXml(o.sp.acsUrl);
  return `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${samlId()}" Version="2.0" IssueInstant="${iso(o.now)}" Destination="${acs}"${inResponseTo}>`
    + `${issuer}<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>`
    + `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ID="${samlId()}" Version="2.0" IssueInstant="${iso(o.now)}">`
    + `${issuer}<saml:Subject><saml:NameID Format="${escapeXml(o.sp.nameIdFormat)}">${escapeXml(o.nameId)}</saml:NameID>`
    + `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${exp}" Recipient="${acs}"${inResponseTo}/></saml:SubjectConfirmation></saml:Subject>`
    + `<saml:Conditions NotBefore="${iso(o.now)}" NotOnOrAfter="${exp}"><saml:AudienceRestriction><saml:Audience>${escapeXml(o.sp.entityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>`
    + `<saml:AuthnStatement AuthnInstant="${iso(o.authTime)}" SessionIndex="${escapeXml(o.sessionIndex)}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`
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
  const nameId = nameIdOf(sp, user);
  const sessionIndex = samlId();
  const xml = responseXml({ idpEntityId: u.entityId, sp, user: user as never, inResponseTo: request?.id ?? null, now, authTime: session.authTime || now, nameId, sessionIndex });
  const idp = idpEntity(d, org, [signing.certPem], signing, sp);
  // sign the assertion, encrypt it (when the SP registered an encryption certificate), sign the Response
  const signed = await idp.createLoginResponse(spEntity(sp), null as never, 'post', {}, {
    customTagReplacement: () => ({ id: '', context: xml }), encryptThenSign: Boolean(sp.spEncryptionCertPem),
  } as never);
  await d.audit(auditRecord(ctx, 'saml.idp_assertion_issued', {
    actor: { type: 'user', id: user.id, email: user.email ?? null }, resourceType: 'saml_service_provider', resourceId: sp.id,
    details: { org_id: org.id, entity_id: sp.entityId, flow: request ? 'sp_initiated' : 'idp_initiated', key_id: signing.id, encrypted: Boolean(sp.spEncryptionCertPem) },
  }));
  // issue 31: the SP is a participant of this browser session until it ends (Single Logout names it)
  await d.store.participants.record({
    orgId: org.id, sessionId: sessionKey(session), spId: sp.id, nameId, nameIdFormat: sp.nameIdFormat, sessionIndex, issuedAt: now, expiresAt: session.expiresAt,
  });
  return { status: 200, content_type: 'text/html; charset=utf-8', body: autoPost(sp.acsUrl, String(signed.context), relayState) };
}

/** SAML Core §3.2.2.2 and §3.7.3.2 status codes of the LogoutResponse. */
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const STATUS_REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';
const STATUS_PARTIAL_LOGOUT = 'urn:oasis:names:tc:SAML:2.0:status:PartialLogout';

/** How long the IdP waits for one SP's LogoutResponse (seconds): the browser goes there and comes back. */
export const LOGOUT_HOP_TTL_SECONDS = 300;

/** The browser session the session participants are recorded under: the sign-on session (`sid`), else the session itself. */
const sessionKey = (session: SessionRecord): string => session.sid ?? session.id;

/**
 * Issue 31: a Single Logout on its way through the browser (SAML Profiles §4.4.3.4), stored between
 * hops as {@link PendingLogoutRecord.data} under the ID of the LogoutRequest awaiting its answer.
 */
interface LogoutChain {
  /** the SP whose LogoutRequest started the logout: its id, the request's ID and RelayState */
  initiator: { spId: string; requestId: string; relayState: string | null };
  /** the user of the ended session */
  userId: string | null;
  /** the SP whose LogoutResponse is awaited */
  awaiting: string | null;
  /** the session participants still to visit, in the order they were signed in to */
  remaining: SessionParticipantRecord[];
  /** Core §3.7.3.2: some participant answered non-success, could not be reached or could not be verified */
  partial: boolean;
}

/**
 * The signed LogoutResponse to `sp`'s `slo_url` (HTTP-POST, Bindings §3.5; signed with the current key),
 * answering its request `inResponseTo` with `status`.
 */
function logoutResponsePage(d: SamlIdpDeps, org: OrganizationRecord, sp: ServiceProviderRecord & { sloUrl: string }, signing: SigningKey, inResponseTo: string, status: string, relayState: string | null): IdpHttpResponse {
  const idp = idpEntity(d, org, [signing.certPem], signing, sp);
  const response = idp.createLogoutResponse(spEntity(sp), { extract: { request: { id: inResponseTo } } } as never, 'post', {
    relayState: relayState ?? '',
    customTagReplacement: (template: string) => {
      const responseId = samlId();
      // samlify's template with its {Tag} placeholders, filled with XML-escaped values (as samlify's own filler does)
      const values: Record<string, string> = {
        ID: responseId, Issuer: urls(d, org).entityId, IssueInstant: iso(d.now()), StatusCode: status, InResponseTo: inResponseTo, Destination: sp.sloUrl,
      };
      return { id: responseId, context: template.replace(/\{(\w+)\}/g, (_m, tag: string) => escapeXml(values[tag] ?? '')) };
    },
  } as never) as { context: string };
  return { status: 200, content_type: 'text/html; charset=utf-8', body: autoPost(sp.sloUrl, String(response.context), relayState) };
}

/**
 * The next hop of a Single Logout (SAML Profiles §4.4.3.3, Core §3.7.1): a LogoutRequest to the next
 * remaining participant that has an `slo_url`, signed with the current key on HTTP-Redirect (Bindings
 * §3.4.4.1), naming the NameID and SessionIndex of its assertion; the chain waits for its answer under
 * the request's ID. A participant that is inactive or has no `slo_url` cannot be logged out: the logout
 * becomes partial; one deleted since is no participant any more. With none left, the LogoutResponse to
 * the initiator: `Success`, or `PartialLogout` (Core §3.7.3.2).
 */
async function nextLogoutHop(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, chain: LogoutChain): Promise<IdpHttpResponse> {
  const { signing } = await publishedKeys(d, org.id);
  for (let p = chain.remaining.shift(); p; p = chain.remaining.shift()) {
    const sp = await d.store.providers.get(p.spId);
    if (!sp || sp.orgId !== org.id) continue;
    if (!sp.isActive || !sp.sloUrl) {
      chain.partial = true;
      await auditPropagation(d, ctx, org, sp, chain, null, sp.isActive ? 'the service provider has no slo_url registered' : 'the service provider is not active');
      continue;
    }
    const requestId = samlId();
    const values: Record<string, string> = {
      ID: requestId, Destination: sp.sloUrl, Issuer: urls(d, org).entityId, IssueInstant: iso(d.now()), NameIDFormat: p.nameIdFormat, NameID: p.nameId, SessionIndex: p.sessionIndex,
    };
    const out = idpEntity(d, org, [signing.certPem], signing, sp).createLogoutRequest(spEntity(sp), 'redirect', { logoutNameID: p.nameId, sessionIndex: p.sessionIndex } as never, {
      customTagReplacement: (template: string) => ({ id: requestId, context: template.replace(/\{(\w+)\}/g, (_m, tag: string) => escapeXml(values[tag] ?? '')) }),
    } as never) as { context: string };
    await d.store.logouts.put({ requestId, orgId: org.id, data: JSON.stringify({ ...chain, awaiting: sp.id }), expiresAt: d.now() + LOGOUT_HOP_TTL_SECONDS });
    return { status: 302, content_type: '', body: '', location: String(out.context) };
  }
  const status = chain.partial ? STATUS_PARTIAL_LOGOUT : STATUS_SUCCESS;
  const initiator = await d.store.providers.get(chain.initiator.spId);
  if (!initiator?.sloUrl) return page(200, 'Signed out', 'You have been signed out.');
  return logoutResponsePage(d, org, { ...initiator, sloUrl: initiator.sloUrl }, signing, chain.initiator.requestId, status, chain.initiator.relayState);
}

/** `saml.idp_logout_propagated`: one participant's outcome (its status when it answered; why it failed). */
async function auditPropagation(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, sp: ServiceProviderRecord, chain: LogoutChain, status: string | null, failure: string | null): Promise<void> {
  await d.audit(auditRecord(ctx, 'saml.idp_logout_propagated', {
    actor: { type: 'user', id: chain.userId }, resourceType: 'saml_service_provider', resourceId: sp.id,
    details: { org_id: org.id, entity_id: sp.entityId, initiator_id: chain.initiator.spId, status, logged_out: failure === null, ...(failure ? { reason: failure } : {}) },
  }));
}

/**
 * `/idp/slo` with a LogoutRequest: SP-initiated Single Logout (SAML Profiles §4.4.3, §4.4.4). The
 * LogoutRequest's SP must be registered and active, have an `slo_url` and a signing certificate, and
 * have signed the request (§4.4.4.1: the requester authenticates itself; an unsigned request could log
 * anyone out); its `Destination` must be this endpoint. The browser's Gatehouse session ends when its
 * user is the request's NameID (per the SP's NameID format; a transient NameID names the session's
 * user), or there is none; a session of another user stays: `Requester` (Core §3.7.3.2). Issue 31:
 * when the session ended, each other participant of it gets a LogoutRequest in turn (see
 * {@link nextLogoutHop}); at the end the initiator gets a LogoutResponse signed with the current key,
 * POSTed to its `slo_url`, with `InResponseTo`.
 */
async function sloRequest(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, req: IdpHttpRequest, params: Record<string, string>): Promise<IdpHttpResponse> {
  const method = req.method.toUpperCase();
  const relayState = params['RelayState'] ?? null;
  if (relayState !== null && relayState.length > 1024) throw new Refusal(400, 'RelayState is too long');
  const binding = method === 'POST' ? 'post' : 'redirect';
  const xml = decodeRequest(params['SAMLRequest']!, binding);
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
  const chain: LogoutChain = { initiator: { spId: sp.id, requestId: id, relayState }, userId: session?.userId ?? null, awaiting: null, remaining: [], partial: false };
  let sessionEnded = false;
  if (session && session.loginMethod !== 'client_credentials') {
    if (!d.authn) throw new AppError('unavailable', 'authn service unavailable');
    const user = await d.authn.GetUser({ user_id: session.userId }, ctx).catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'not_found') return null;
      throw err;
    });
    const named = !user || sp.nameIdFormat === NAME_ID_FORMATS.transient
      || nameId === user.id || (typeof user.email === 'string' && nameId.toLowerCase() === user.email.toLowerCase());
    if (!named) {
      const { signing } = await publishedKeys(d, org.id);
      await d.audit(auditRecord(ctx, 'saml.idp_logout', {
        actor: { type: 'user', id: session.userId }, resourceType: 'saml_service_provider', resourceId: sp.id,
        details: { org_id: org.id, entity_id: sp.entityId, session_ended: false, participants: 0, status: STATUS_REQUESTER, key_id: signing.id },
      }));
      return logoutResponsePage(d, org, { ...sp, sloUrl: sp.sloUrl }, signing, id, STATUS_REQUESTER, relayState);
    }
    await d.authn.EndCookieSession({}, ctx);
    sessionEnded = true;
    // issue 31: the session's other participants, to be logged out one after another through the browser
    chain.remaining = (await d.store.participants.take(org.id, sessionKey(session), d.now())).filter((p) => p.spId !== sp.id);
  }
  // the logout is recorded when it is accepted (the chain may never come back); its final status, when
  // other participants are visited, follows from their `saml.idp_logout_propagated` rows
  const { signing } = await publishedKeys(d, org.id);
  await d.audit(auditRecord(ctx, 'saml.idp_logout', {
    actor: { type: 'user', id: chain.userId }, resourceType: 'saml_service_provider', resourceId: sp.id,
    details: {
      org_id: org.id, entity_id: sp.entityId, session_ended: sessionEnded, participants: chain.remaining.length,
      status: chain.remaining.length === 0 ? STATUS_SUCCESS : null, key_id: signing.id,
    },
  }));
  return nextLogoutHop(d, ctx, org, chain);
}

/**
 * `/idp/slo` with a LogoutResponse (issue 31): a participant's answer to the LogoutRequest this IdP sent
 * it (HTTP-Redirect or HTTP-POST). Its `InResponseTo` names the waiting logout (single use, within
 * {@link LOGOUT_HOP_TTL_SECONDS}; unknown → 400). The participant is logged out when the answer's Issuer
 * is its entity ID, its `Destination` (when given) this endpoint, its status `Success` (Core §3.7.3.2) and,
 * when it registered a signing certificate, its signature verifies (samlify); otherwise the logout is
 * partial. Either way `saml.idp_logout_propagated` records it and the chain goes on.
 */
async function sloResponse(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, req: IdpHttpRequest, params: Record<string, string>): Promise<IdpHttpResponse> {
  const binding = req.method.toUpperCase() === 'POST' ? 'post' : 'redirect';
  const xml = decodeRequest(params['SAMLResponse']!, binding, 'response');
  const out = samlify.Extractor.extract(xml, samlify.Extractor.logoutResponseFields) as {
    response?: { inResponseTo?: string; destination?: string } | null; issuer?: string | null;
  };
  const inResponseTo = out.response?.inResponseTo?.trim();
  if (!inResponseTo || parseStrictXml(xml).documentElement?.localName !== 'LogoutResponse') {
    throw new Refusal(400, 'the SAML response is not a LogoutResponse with an InResponseTo');
  }
  const pending = await d.store.logouts.take(inResponseTo, d.now());
  if (!pending || pending.orgId !== org.id) throw new Refusal(400, 'this LogoutResponse answers no logout in progress (unknown, already answered or expired)');
  const chain = JSON.parse(pending.data) as LogoutChain;
  const sp = chain.awaiting ? await d.store.providers.get(chain.awaiting) : null;
  if (sp) {
    const { status, failure } = await checkLogoutResponse(d, org, sp, { xml, binding, params, rawQuery: req.query, issuer: out.issuer, destination: out.response?.destination });
    if (failure) chain.partial = true;
    await auditPropagation(d, ctx, org, sp, chain, status, failure);
  }
  return nextLogoutHop(d, ctx, org, { ...chain, awaiting: null });
}

/**
 * Checks a participant's LogoutResponse (see {@link sloResponse}): its top-level status, and null, or
 * why the participant does not count as logged out.
 */
async function checkLogoutResponse(d: SamlIdpDeps, org: OrganizationRecord, sp: ServiceProviderRecord, m: {
  xml: string; binding: 'redirect' | 'post'; params: Record<string, string>; rawQuery: string; issuer?: unknown; destination?: string | undefined;
}): Promise<{ status: string | null; failure: string | null }> {
  const top = (samlify.Extractor.extract(m.xml, samlify.Extractor.logoutResponseStatusFields) as { top?: string | null }).top;
  const status = typeof top === 'string' && top ? top : null;
  const issuer = typeof m.issuer === 'string' ? m.issuer.trim() : '';
  if (issuer !== sp.entityId) return { status, failure: 'the LogoutResponse Issuer is not the service provider' };
  if (m.destination !== undefined && m.destination.trim() !== '' && m.destination.trim() !== urls(d, org).slo) {
    return { status, failure: 'the LogoutResponse Destination is not this endpoint' };
  }
  // a failure answer needs no proof: unverified, it counts as a failure all the same
  if (status !== STATUS_SUCCESS) return { status, failure: `the service provider answered ${status ?? 'no status'}` };
  if (sp.spCertPem) {
    try {
      await verifyRequestSignature({ idp: idpEntity(d, org, [sp.spCertPem], null, sp), sp, binding: m.binding, kind: 'logout-response', xml: m.xml, params: m.params, rawQuery: m.rawQuery });
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      return { status, failure: err.message };
    }
  }
  return { status, failure: null };
}

/** `/idp/slo`: a LogoutRequest (an SP starts Single Logout) or a LogoutResponse (a participant's answer). */
async function slo(d: SamlIdpDeps, ctx: CallContext, org: OrganizationRecord, req: IdpHttpRequest, params: Record<string, string>): Promise<IdpHttpResponse> {
  if (params['SAMLResponse']) return sloResponse(d, ctx, org, req, params);
  if (!params['SAMLRequest']) throw new Refusal(400, 'SAMLRequest (a LogoutRequest) or SAMLResponse (a LogoutResponse) is required');
  return sloRequest(d, ctx, org, req, params);
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
