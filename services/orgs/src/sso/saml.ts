/**
 * @module orgs/sso/saml
 * Gatehouse as a SAML 2.0 service provider of an organization's IdP (behaviour.md §6.3; SAML 2.0
 * Core, Bindings §3.4 HTTP-Redirect and §3.5 HTTP-POST, Profiles §4.1 Web Browser SSO), on
 * `@node-saml/node-saml`:
 *
 * - {@link spMetadata}: our SP metadata (entity id, ACS, `AuthnRequestsSigned`, `WantAssertionsSigned`,
 *   the connection's SP certificate as the `signing` and `encryption` KeyDescriptor, and during a rotation
 *   in place the staged or previous certificate beside it; sp-keys.ts);
 * - {@link samlLoginUrl}: the SP-initiated AuthnRequest by HTTP-Redirect to `idp_sso_url`, signed
 *   (`SigAlg` RSA-SHA256, `Signature`) with the connection's SP key, its id kept
 *   in a pending login (10 min) whose reference travels as RelayState;
 * - {@link consumeSamlResponse}: the ACS. node-saml decrypts an `EncryptedAssertion` with the SP key (during
 *   a rotation in place, with whichever published key it was encrypted to), checks the signature against the stored IdP
 *   certificate (the assertion must be signed), the audience (= our SP entity id), `NotBefore` /
 *   `NotOnOrAfter` with 60 s of clock skew and `InResponseTo` against the pending request. node-saml
 *   returns the assertion from the bytes the signature covers (exactly one assertion, one enveloped
 *   signature whose Reference is its parent), so a wrapped copy is never read (XML signature wrapping).
 *   Here we add the issuer of the signed assertion and of the Response (= the connection's
 *   `idp_entity_id`; node-saml's `idpIssuer` applies to logout messages only), the recipient of a bearer
 *   confirmation and the destination (= our ACS URL, Profiles §4.1.4.2/§4.1.4.3), the replay
 *   refusal (the assertion ID recorded in the database until it expires, so it holds across replicas)
 *   and the IdP-initiated rule (no `InResponseTo` only when `allow_idp_initiated`).
 */
import { randomBytes } from 'node:crypto';
import { SAML, ValidateInResponseTo, type CacheProvider, type Profile } from '@node-saml/node-saml';
import { AppError } from '@gatehouse/errors';
import type { Element } from '@xmldom/xmldom';
import { parseStrictXml } from '../samlidp/xml.ts';
import type { OrganizationRecord } from '../storage/ports.ts';
import { effectiveSaml, ssoUrls } from './connections.ts';
import type { SsoDeps } from './deps.ts';
import { emailVerifiedFor, type FederatedIdentity } from './identity.ts';
import { spKeyOf, spKeySetOf, type SpKeyPair } from './sp-keys.ts';
import type { SamlConnectionRecord } from './storage/ports.ts';
import { PENDING_TTL_S, SamlRejected, type LoginParams } from './login.ts';

export { PENDING_TTL_S, SamlRejected, type LoginParams };

/** Clock skew accepted on NotBefore / NotOnOrAfter (ms). */
export const SAML_CLOCK_SKEW_MS = 60_000;
/** A replayed assertion is remembered at least this long after it is consumed (s). */
const REPLAY_MIN_TTL_S = 3600;

const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';


/** A node-saml cache holding the one AuthnRequest id a response may answer (or none). */
function requestCache(known: { id: string; instant: string } | null, saved: (id: string, instant: string) => void): CacheProvider {
  return {
    async saveAsync(key, value) { saved(key, value); return { value, createdAt: Date.now() }; },
    async getAsync(key) { return known && known.id === key ? known.instant : null; },
    async removeAsync(key) { return key; },
  };
}

function samlOf(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord, key: SpKeyPair, cache: CacheProvider, post = false): SAML {
  const eff = effectiveSaml(d, c, org.name);
  return new SAML({
    issuer: eff.spEntityId, callbackUrl: eff.acsUrl, audience: eff.spEntityId, entryPoint: c.idpSsoUrl, idpCert: c.idpCertificate,
    idpIssuer: c.idpEntityId, wantAssertionsSigned: true, wantAuthnResponseSigned: false, acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.ifPresent, cacheProvider: cache, identifierFormat: null, disableRequestedAuthnContext: true,
    generateUniqueId: () => `_${randomBytes(20).toString('hex')}`,
    // issue 31 §1: AuthnRequests signed with the connection's SP key (Bindings §3.4.4.1: SigAlg and
    // Signature over the query), RSA-SHA256; the same key decrypts an EncryptedAssertion (Core §2.3.4)
    privateKey: key.keyPem, publicCert: key.certPem, decryptionPvk: key.keyPem, signatureAlgorithm: 'sha256', digestAlgorithm: 'sha256',
    // HTTP-POST (Bindings §3.5.4): the XML signed in the message, base64 without DEFLATE
    ...(post ? { authnRequestBinding: 'HTTP-POST', skipRequestCompression: true } : {}),
    // Single Logout (Profiles §4.4): our LogoutRequest to the IdP's endpoint, its answer to ours
    ...(c.idpSloUrl ? { logoutUrl: c.idpSloUrl, logoutCallbackUrl: ssoUrls(d, org.name).samlSlo } : {}),
  });
}

const certBody = (pem: string): string => pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');

/**
 * Our SP metadata for the org's connection (XML, SAML Metadata §2.4.4): the entity id, the ACS
 * (HTTP-POST), `AuthnRequestsSigned="true"`, `WantAssertionsSigned="true"` and the connection's SP
 * certificate as the `signing` and the `encryption` KeyDescriptor (creating the key pair on first use).
 * During a rotation in place (sp-keys.ts) the staged or previous certificate is published too, as a
 * second `signing` and `encryption` KeyDescriptor (Metadata §2.4.1.1 allows several of each).
 */
export async function spMetadata(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord): Promise<string> {
  const { current, others } = await spKeySetOf(d, c);
  let xml = samlOf(d, org, c, current, requestCache(null, () => undefined))
    .generateServiceProviderMetadata(current.certPem, [current.certPem, ...others.map((k) => k.certPem)]);
  if (others.length > 0) {
    // node-saml writes one encryption KeyDescriptor: repeat it for each other certificate
    xml = xml.replace(/<KeyDescriptor use="encryption">[\s\S]*?<\/KeyDescriptor>/, (block) =>
      [block, ...others.map((k) => block.replace(/(<ds:X509Certificate>)[^<]*(<\/ds:X509Certificate>)/, `$1${certBody(k.certPem)}$2`))].join(''));
  }
  // node-saml names HTTP-POST for the SingleLogoutService; ours takes the LogoutResponse by HTTP-Redirect
  return xml.replace(/(<SingleLogoutService Binding=")urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-POST"/, '$1urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"');
}

/** The SP-initiated login's answer: a redirect (HTTP-Redirect binding) or an auto-posting form (HTTP-POST). */
export type SamlLoginAnswer = { location: string } | { html: string };

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The SP-initiated login: stores a pending login with the request id and `params` (10 min), and
 * answers with the signed AuthnRequest for the connection's `idp_sso_binding`:
 * - HTTP-Redirect (Bindings §3.4.4.1): the IdP URL carrying the deflated AuthnRequest, our RelayState,
 *   `SigAlg` RSA-SHA256 and `Signature` over `SAMLRequest=…&RelayState=…&SigAlg=…`;
 * - HTTP-POST (Bindings §3.5.4): an HTML form auto-posting the base64 AuthnRequest, signed as XML
 *   (an enveloped RSA-SHA256 signature, SAML Core §5.4), and the RelayState to `idp_sso_url`.
 */
export async function samlLogin(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord, params: LoginParams): Promise<SamlLoginAnswer> {
  let request: { id: string; instant: string } | null = null;
  const relayState = randomBytes(24).toString('base64url');
  const key = await spKeyOf(d, c);
  const post = c.idpSsoBinding === 'HTTP-POST';
  const sp = samlOf(d, org, c, key, requestCache(null, (id, instant) => { request = { id, instant }; }), post);
  let answer: SamlLoginAnswer;
  if (post) {
    const message = await sp.getAuthorizeMessageAsync(relayState, undefined, {});
    const fields = Object.entries(message).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(String(v))}">`).join('');
    answer = {
      html: '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signing in…</title></head><body>'
        + `<form method="post" action="${escapeHtml(c.idpSsoUrl)}">${fields}`
        + '<noscript><p>Continue to your identity provider.</p><button type="submit">Continue</button></noscript></form>'
        + '<script>document.forms[0].submit()</script></body></html>',
    };
  } else {
    answer = { location: await sp.getAuthorizeUrlAsync(relayState, undefined, {}) };
  }
  if (request === null) throw new AppError('internal', 'internal error', { reason: 'no AuthnRequest id' });
  await d.store.pending.put({ id: relayState, orgId: org.id, kind: 'saml', data: JSON.stringify({ request, params }), expiresAt: d.now() + PENDING_TTL_S });
  return answer;
}

/**
 * {@link samlLogin} of a connection on HTTP-Redirect: the IdP URL.
 * @throws AppError `failed_precondition` when the connection posts its AuthnRequests
 */
export async function samlLoginUrl(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord, params: LoginParams): Promise<string> {
  const answer = await samlLogin(d, org, c, params);
  if (!('location' in answer)) throw new AppError('failed_precondition', 'the SAML connection uses the HTTP-POST binding');
  return answer.location;
}


const UNDECRYPTABLE = 'the assertion could not be decrypted';

/** node-saml's error texts → our short reasons. */
function reasonOf(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  if (/decrypt|oaep|rsa routines|EncryptedAssertion/i.test(m)) return UNDECRYPTABLE;
  if (/signature/i.test(m)) return 'invalid signature';
  if (/audience/i.test(m)) return 'wrong audience';
  // an expired bearer SubjectConfirmationData is reported as "no valid subject confirmation"
  if (/expired|subject confirmation/i.test(m)) return 'assertion expired';
  if (/not yet valid/i.test(m)) return 'assertion not yet valid';
  if (/InResponseTo/i.test(m)) return 'unknown or expired request';
  if (/issuer/i.test(m)) return 'wrong issuer';
  if (/status/i.test(m) || /Responder|Requester/.test(m)) return 'the identity provider refused the login';
  return 'malformed response';
}

type XmlJs = Record<string, any>;
const first = (v: unknown): XmlJs | undefined => (Array.isArray(v) ? v[0] : undefined) as XmlJs | undefined;
/** xml2js text of an element (a plain string, or `_` when it has attributes) */
const textOf = (v: unknown): string | null => (typeof v === 'string' ? v : typeof (v as XmlJs | undefined)?.['_'] === 'string' ? (v as XmlJs)['_'] as string : null);

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';

/**
 * The `Destination` attribute and the `Issuer` child of the posted `samlp:Response` (both optional in
 * SAML Core §3.2.2), read with the strict parser (no DTD, no entities).
 * @throws SamlRejected 'malformed response' when the document is not a SAML protocol Response
 */
function responseEnvelope(base64: string): { destination: string | null; issuer: string | null } {
  let root: Element | null;
  try {
    root = parseStrictXml(Buffer.from(base64, 'base64').toString('utf8')).documentElement;
  } catch {
    throw new SamlRejected('malformed response');
  }
  if (!root || root.localName !== 'Response' || root.namespaceURI !== PROTOCOL_NS) throw new SamlRejected('malformed response');
  const issuers = Array.from(root.childNodes).filter((n): n is Element => n.nodeType === 1 && (n as Element).localName === 'Issuer' && (n as Element).namespaceURI === ASSERTION_NS);
  if (issuers.length > 1) throw new SamlRejected('malformed response');
  return { destination: root.getAttribute('Destination'), issuer: issuers[0] ? (issuers[0].textContent ?? '').trim() : null };
}

/** The attribute of the profile named by the mapping, else the first present default name. */
function attr(profile: Profile, mapping: Record<string, string>, field: string, defaults: string[]): string | null {
  for (const name of mapping[field] ? [mapping[field]] : defaults) {
    const v = (profile.attributes as Record<string, unknown> | undefined)?.[name] ?? profile[name];
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === 'string' && s.trim() !== '') return s.trim();
  }
  return null;
}

const EMAIL_ATTRS = ['email', 'mail', 'urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'];
const GIVEN_ATTRS = ['given_name', 'givenName', 'urn:oid:2.5.4.42', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname'];
const FAMILY_ATTRS = ['family_name', 'sn', 'surname', 'urn:oid:2.5.4.4', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname'];

/** The outcome of a valid ACS post: who logged in, and where the app wants them. */
export interface SamlLogin {
  identity: FederatedIdentity;
  params: LoginParams;
  /** true: an IdP-initiated response (no AuthnRequest of ours) */
  unsolicited: boolean;
  /** what a later LogoutRequest names (SAML Core §3.7.1): the NameID, its format and the AuthnStatement's SessionIndex */
  session: SamlSession;
}

/** The IdP session of a SAML login, for Single Logout. */
export interface SamlSession { nameID: string; nameIDFormat: string; sessionIndex: string | null }

/**
 * Validates one `SAMLResponse` posted to the org's ACS (module doc) and maps its attributes through
 * `attribute_mapping` (`email`, `given_name`, `family_name` → attribute names; defaults: the common
 * names and OIDs, and an email-format NameID for the email).
 * @param form the posted fields: `SAMLResponse` (base64), `RelayState`
 * @throws SamlRejected (400) with the reason
 */
export async function consumeSamlResponse(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord, form: Record<string, string>): Promise<SamlLogin> {
  const response = form['SAMLResponse'] ?? '';
  if (response === '' || response.length > 1_048_576) throw new SamlRejected('missing or oversized SAMLResponse');
  const relayState = form['RelayState'] ?? '';
  const pending = relayState !== '' && relayState.length <= 64 ? await d.store.pending.take(relayState, d.now()) : null;
  const ours = pending && pending.orgId === org.id && pending.kind === 'saml'
    ? JSON.parse(pending.data) as { request: { id: string; instant: string }; params: LoginParams }
    : null;
  const outer = responseEnvelope(response);
  const { current, others } = await spKeySetOf(d, c);
  let profile: Profile | null = null;
  // an assertion encrypted to a staged or previous SP key (rotation in place, sp-keys.ts) is decrypted
  // with that key: when the current key cannot decrypt it, each other published key is tried
  let failure: string | null = null;
  for (const key of [current, ...others]) {
    try {
      ({ profile } = await samlOf(d, org, c, key, requestCache(ours?.request ?? null, () => undefined)).validatePostResponseAsync({ SAMLResponse: response }));
      failure = null;
      break;
    } catch (err) {
      failure = reasonOf(err);
      if (failure !== UNDECRYPTABLE) break;
    }
  }
  if (failure !== null) throw new SamlRejected(failure);
  if (!profile) throw new SamlRejected('the identity provider refused the login');
  const unsolicited = !profile.inResponseTo;
  if (unsolicited && !c.allowIdpInitiated) throw new SamlRejected('unsolicited response not allowed');
  if (!unsolicited && !ours) throw new SamlRejected('unknown or expired request');
  const eff = effectiveSaml(d, c, org.name);
  // everything below reads the assertion node-saml returned from the signed bytes (the element the
  // signature's one Reference covers and that is the Signature's parent), never the posted document
  const assertion = (profile.getAssertion?.() as XmlJs | undefined)?.['Assertion'] as XmlJs | undefined;
  // SAML Core §2.3.3: an assertion's Issuer is required; Profiles §4.1.4.2: it is the IdP's entity id
  if (textOf(first(assertion?.['Issuer'])) !== c.idpEntityId) throw new SamlRejected('wrong issuer');
  // the outer Response (unsigned here): its Issuer, when present, must be the same IdP (Profiles §4.1.4.2)
  if (outer.issuer !== null && outer.issuer !== c.idpEntityId) throw new SamlRejected('wrong issuer');
  // Profiles §4.1.4.2: a bearer SubjectConfirmationData whose Recipient is our ACS; §4.1.4.3 Destination
  const confirmations = (first(assertion?.['Subject'])?.['SubjectConfirmation'] ?? []) as XmlJs[];
  const confirmation = confirmations
    .filter((sc) => sc?.['$']?.['Method'] === BEARER)
    .map((sc) => first(sc['SubjectConfirmationData']))
    .find((data) => data?.['$']?.['Recipient'] === eff.acsUrl);
  if (!confirmation) throw new SamlRejected('wrong recipient');
  if (outer.destination !== null && outer.destination !== eff.acsUrl) throw new SamlRejected('wrong destination');
  const assertionId = assertion?.['$']?.['ID'];
  if (typeof assertionId !== 'string' || assertionId === '') throw new SamlRejected('malformed response');
  const notOnOrAfter = Date.parse(first(assertion?.['Conditions'])?.['$']?.['NotOnOrAfter'] ?? confirmation?.['$']?.['NotOnOrAfter'] ?? '');
  const now = d.now();
  const expires = Math.max(Number.isFinite(notOnOrAfter) ? Math.ceil(notOnOrAfter / 1000) + SAML_CLOCK_SKEW_MS / 1000 : 0, now + REPLAY_MIN_TTL_S);
  if (!(await d.store.consumeAssertion(org.id, assertionId, expires, now))) throw new SamlRejected('replayed assertion');

  const mapping = c.attributeMapping ? JSON.parse(c.attributeMapping) as Record<string, string> : {};
  const email = (attr(profile, mapping, 'email', EMAIL_ATTRS) ?? (profile.nameIDFormat === EMAIL_FORMAT ? profile.nameID : null))?.toLowerCase() ?? null;
  const identity: FederatedIdentity = {
    issuer: c.idpEntityId, subject: profile.nameID, email, emailVerified: await emailVerifiedFor(d, org.id, email, false),
    givenName: attr(profile, mapping, 'given_name', GIVEN_ATTRS), familyName: attr(profile, mapping, 'family_name', FAMILY_ATTRS),
  };
  const params = ours?.params ?? (/^https?:\/\//.test(relayState) ? { redirect_uri: relayState } : {});
  const session: SamlSession = { nameID: profile.nameID, nameIDFormat: profile.nameIDFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified', sessionIndex: profile.sessionIndex ?? null };
  return { identity, params, unsolicited, session };
}

/**
 * SP-initiated Single Logout (SAML Profiles §4.4.3, Bindings §3.4): a LogoutRequest naming `session`,
 * signed by the connection's SP key (`SigAlg` RSA-SHA256, `Signature`), to the connection's
 * `idp_slo_url` by HTTP-Redirect; its id is kept in a pending logout (10 min) whose reference travels as
 * RelayState. @returns the IdP URL
 * @throws AppError `failed_precondition` when the connection has no `idp_slo_url`
 */
export async function samlLogoutUrl(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord, session: SamlSession): Promise<string> {
  if (!c.idpSloUrl) throw new AppError('failed_precondition', SLO_NOT_CONFIGURED);
  let request: { id: string; instant: string } | null = null;
  const relayState = randomBytes(24).toString('base64url');
  const sp = samlOf(d, org, c, await spKeyOf(d, c), requestCache(null, (id, instant) => { request = { id, instant }; }));
  const url = await sp.getLogoutUrlAsync({ issuer: c.idpEntityId, nameID: session.nameID, nameIDFormat: session.nameIDFormat, sessionIndex: session.sessionIndex ?? undefined } as Profile, relayState, {});
  if (request === null) throw new AppError('internal', 'internal error', { reason: 'no LogoutRequest id' });
  await d.store.pending.put({ id: relayState, orgId: org.id, kind: 'slo', data: JSON.stringify({ request }), expiresAt: d.now() + PENDING_TTL_S });
  return url;
}

export const SLO_NOT_CONFIGURED = 'the SAML connection has no single logout endpoint';

/**
 * Our SingleLogoutService: the IdP's LogoutResponse by HTTP-Redirect (SAML Profiles §4.4.4.2). It must
 * answer our pending LogoutRequest (RelayState, `InResponseTo`), be signed by the IdP's certificate
 * over the query (Bindings §3.4.4.1; an unsigned one is refused), name the IdP as Issuer and report
 * Success.
 * @param query the decoded query parameters; `rawQuery` the query as sent (the signed octets)
 * @throws SamlRejected (400) with the reason
 */
export async function consumeLogoutResponse(d: SsoDeps, org: OrganizationRecord, c: SamlConnectionRecord, query: Record<string, string>, rawQuery: string): Promise<void> {
  const response = query['SAMLResponse'] ?? '';
  if (response === '' || response.length > 65_536) throw new SamlRejected('missing or oversized SAMLResponse');
  if (!query['Signature'] || !query['SigAlg']) throw new SamlRejected('unsigned logout response');
  const relayState = query['RelayState'] ?? '';
  const pending = relayState !== '' && relayState.length <= 64 ? await d.store.pending.take(relayState, d.now()) : null;
  if (!pending || pending.orgId !== org.id || pending.kind !== 'slo') throw new SamlRejected('unknown or expired logout request');
  const { request } = JSON.parse(pending.data) as { request: { id: string; instant: string } };
  try {
    await samlOf(d, org, c, await spKeyOf(d, c), requestCache(request, () => undefined))
      .validateRedirectAsync({ SAMLResponse: response, Signature: query['Signature'], SigAlg: query['SigAlg'], RelayState: relayState }, rawQuery);
  } catch (err) {
    throw new SamlRejected(reasonOf(err));
  }
}
