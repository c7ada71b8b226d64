/**
 * @module @gatehouse/testing/saml-idp
 * A real SAML 2.0 identity provider for tests, on `samlify` (the product's SP uses
 * `@node-saml/node-saml`, so the two sides are different code): its own RSA key and certificate, it
 * reads the SP's metadata and the SP's HTTP-Redirect AuthnRequest, and answers with a signed
 * Response/Assertion for the HTTP-POST binding. Every value of the response can be overridden, so a
 * test can produce a wrong audience, an expired assertion, a foreign recipient or an unsolicited
 * (IdP-initiated) response, each still correctly signed. Optionally it requires signed AuthnRequests
 * (verified with the `signing` certificate of the SP's metadata) and encrypts the assertion for the
 * SP's `encryption` certificate. Schema validation of the incoming AuthnRequest
 * is off on this side (samlify's validators need Java): it is the test's peer, not the product.
 */
import { randomBytes } from 'node:crypto';
import samlifyModule from 'samlify';
import type * as Samlify from 'samlify';

// CommonJS: its named exports are read from the module object (SamlLib is not seen by ESM's export detection)
const samlify = samlifyModule as unknown as typeof Samlify;
import { selfSigned, type KeyPair } from './certs.ts';

samlify.setSchemaValidator({ validate: async () => 'skipped' });

const NS = 'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"';
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface SamlUser {
  email: string;
  givenName?: string;
  familyName?: string;
  /** SAML attribute name → value (replaces the default email/givenName/sn attributes) */
  attributes?: Record<string, string>;
}

/** Values of the Response to change from what a correct IdP would send. */
export interface ResponseOverrides {
  audience?: string;
  recipient?: string;
  destination?: string;
  /** Conditions/SubjectConfirmationData NotOnOrAfter */
  notOnOrAfter?: Date;
  notBefore?: Date;
  /** '' for an IdP-initiated response */
  inResponseTo?: string;
  assertionId?: string;
  /** IssueInstant and AuthnInstant (default now) */
  issuedAt?: Date;
  /** the Response's own Issuer (default the IdP entity id); null leaves it out (optional, SAML Core §3.2.2) */
  responseIssuer?: string | null;
  /** the signed Assertion's Issuer (default the IdP entity id) */
  assertionIssuer?: string;
}

/** How the IdP treats the SP (both read from the SP's metadata by samlify). */
export interface SamlIdpOptions {
  /**
   * true: an AuthnRequest must carry a valid HTTP-Redirect signature (SAML Bindings §3.4.4.1) by the
   * SP's `signing` certificate of its metadata; `requestIdOf` rejects otherwise
   */
  wantAuthnRequestsSigned?: boolean;
  /** true: the signed assertion is encrypted for the SP's `encryption` certificate (AES-256-CBC, RSA-OAEP) */
  encryptAssertions?: boolean;
}

/**
 * The octet string an HTTP-Redirect signature covers (SAML Bindings §3.4.4.1):
 * `SAMLRequest=…&RelayState=…&SigAlg=…` with the values exactly as URL-encoded in `url`.
 */
export function redirectOctetString(url: string, message: 'SAMLRequest' | 'SAMLResponse' = 'SAMLRequest'): string {
  const parts = new URL(url).search.slice(1).split('&');
  const pick = (name: string) => parts.find((p) => p.startsWith(`${name}=`));
  return [pick(message), pick('RelayState'), pick('SigAlg')].filter((p): p is string => p !== undefined).join('&');
}

export interface TestSamlIdp {
  entityId: string;
  ssoUrl: string;
  keys: KeyPair;
  /**
   * the request id of an SP's HTTP-Redirect AuthnRequest URL (samlify parses and inflates it; with
   * `wantAuthnRequestsSigned` it first verifies the request's signature with the SP metadata's certificate)
   */
  requestIdOf(spMetadataXml: string, redirectUrl: string): Promise<string>;
  /**
   * the request id of an SP's HTTP-POST AuthnRequest (the form's base64 `SAMLRequest`); with
   * `wantAuthnRequestsSigned` samlify first verifies its XML signature with the SP metadata's certificate
   */
  requestIdOfPost(spMetadataXml: string, samlRequest: string): Promise<string>;
  /**
   * SP-initiated Single Logout at this IdP (SAML Profiles §4.4): verifies the SP's signed HTTP-Redirect
   * LogoutRequest with the SP metadata's signing certificate (rejects otherwise), and answers a signed
   * LogoutResponse (HTTP-Redirect, Success) to the SP metadata's SingleLogoutService.
   * @returns the request's NameID and SessionIndex, and the LogoutResponse URL
   */
  logout(spMetadataXml: string, logoutRequestUrl: string): Promise<{ nameID: string; sessionIndex: string | null; responseUrl: string }>;
  /** a signed SAMLResponse (base64) for the SP described by `spMetadataXml` */
  respond(spMetadataXml: string, user: SamlUser, inResponseTo: string, overrides?: ResponseOverrides): Promise<string>;
}

/**
 * Starts nothing: the IdP is a signer; the browser or test carries its messages.
 * @param entityId the IdP entity id; `ssoUrl` where AuthnRequests go (the connection's `idp_sso_url`)
 */
export function createSamlIdp(entityId: string, ssoUrl: string, keys: KeyPair = selfSigned('test-idp'), opts: SamlIdpOptions = {}): TestSamlIdp {
  const idp = samlify.IdentityProvider({
    entityID: entityId, privateKey: keys.key, signingCert: keys.cert,
    wantAuthnRequestsSigned: opts.wantAuthnRequestsSigned ?? false, isAssertionEncrypted: opts.encryptAssertions ?? false,
    singleSignOnService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: ssoUrl }],
    singleLogoutService: [{ Binding: samlify.Constants.namespace.binding.redirect, Location: `${ssoUrl.replace(/\/+$/, '')}/slo` }],
    wantLogoutRequestSigned: true,
    nameIDFormat: ['urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'],
  });
  return {
    entityId, ssoUrl, keys,
    async requestIdOf(spMetadataXml, redirectUrl) {
      const sp = samlify.ServiceProvider({ metadata: spMetadataXml });
      const query = Object.fromEntries(new URL(redirectUrl).searchParams);
      const parsed = await idp.parseLoginRequest(sp, 'redirect', { query, octetString: redirectOctetString(redirectUrl) });
      return String(parsed.extract.request?.id ?? '');
    },
    async requestIdOfPost(spMetadataXml, samlRequest) {
      const sp = samlify.ServiceProvider({ metadata: spMetadataXml });
      const parsed = await idp.parseLoginRequest(sp, 'post', { body: { SAMLRequest: samlRequest } });
      return String(parsed.extract.request?.id ?? '');
    },
    async logout(spMetadataXml, logoutRequestUrl) {
      const sp = samlify.ServiceProvider({ metadata: spMetadataXml, wantLogoutResponseSigned: true });
      const query = Object.fromEntries(new URL(logoutRequestUrl).searchParams);
      const parsed = await idp.parseLogoutRequest(sp, 'redirect', { query, octetString: redirectOctetString(logoutRequestUrl) });
      const { context } = idp.createLogoutResponse(sp, parsed as never, 'redirect', query['RelayState'] ?? '');
      const extract = parsed.extract as { nameID?: string; sessionIndex?: string };
      return { nameID: String(extract.nameID ?? ''), sessionIndex: extract.sessionIndex ?? null, responseUrl: context };
    },
    async respond(spMetadataXml, user, inResponseTo, o = {}) {
      const sp = samlify.ServiceProvider({ metadata: spMetadataXml });
      const acs = String(sp.entityMeta.getAssertionConsumerService('post'));
      const now = o.issuedAt ?? new Date();
      const later = o.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000);
      const attrs = user.attributes ?? {
        email: user.email, ...(user.givenName ? { givenName: user.givenName } : {}), ...(user.familyName ? { sn: user.familyName } : {}),
      };
      const statement = `<saml:AttributeStatement ${NS}>${Object.entries(attrs).map(([k, v]) =>
        `<saml:Attribute Name="${esc(k)}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">${esc(v)}</saml:AttributeValue></saml:Attribute>`).join('')}</saml:AttributeStatement>`;
      const authn = `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="_${randomBytes(8).toString('hex')}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`;
      const values: Record<string, string> = {
        ID: `_${randomBytes(16).toString('hex')}`, AssertionID: o.assertionId ?? `_${randomBytes(16).toString('hex')}`,
        Destination: o.destination ?? acs, Audience: o.audience ?? String(sp.entityMeta.getEntityID()), SubjectRecipient: o.recipient ?? acs,
        ResponseIssuer: o.responseIssuer ?? entityId, AssertionIssuer: o.assertionIssuer ?? entityId, IssueInstant: now.toISOString(), StatusCode: samlify.Constants.StatusCode.Success,
        ConditionsNotBefore: (o.notBefore ?? new Date(now.getTime() - 1000)).toISOString(), ConditionsNotOnOrAfter: later.toISOString(),
        SubjectConfirmationDataNotOnOrAfter: later.toISOString(), NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
        NameID: user.email, InResponseTo: o.inResponseTo ?? inResponseTo,
      };
      // the two statements are XML, inserted as they are (replaceTagsByValue escapes values)
      let template = samlify.SamlLib.defaultLoginResponseTemplate.context.replace('{AuthnStatement}', authn).replace('{AttributeStatement}', statement)
        // the first Issuer is the Response's, the second the Assertion's
        .replace('<saml:Issuer>{Issuer}</saml:Issuer>', o.responseIssuer === null ? '' : '<saml:Issuer>{ResponseIssuer}</saml:Issuer>')
        .replace('{Issuer}', '{AssertionIssuer}');
      // an unsolicited response carries no InResponseTo at all (SAML Profiles §4.1.5)
      if (values['InResponseTo'] === '') template = template.replace(/ InResponseTo="\{InResponseTo\}"/g, '');
      const { context } = await idp.createLoginResponse(sp, { extract: {} } as never, 'post', { email: user.email }, () => ({ id: values['ID']!, context: samlify.SamlLib.replaceTagsByValue(template, values) }));
      return context;
    },
  };
}
