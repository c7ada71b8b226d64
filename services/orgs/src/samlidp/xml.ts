/**
 * @module orgs/samlidp/xml
 * The one XML parser of the SAML IdP (@xmldom/xmldom) for documents from outside: SP metadata pasted
 * by an admin and AuthnRequests from SPs. No DOCTYPE is accepted, so no entity declarations: no
 * external entities (XXE) and no entity expansion ("billion laughs"). Nothing is ever fetched.
 */
import { DOMParser, type Document } from '@xmldom/xmldom';

export const NO_DTD = 'DOCTYPE and entity declarations are not allowed';

/**
 * Parses `xml` strictly.
 * @throws Error with {@link NO_DTD} for a DOCTYPE or ENTITY declaration, or the parser's message for malformed XML
 */
export function parseStrictXml(xml: string): Document {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) throw new Error(NO_DTD);
  // `errorHandler` (a function is xmldom 0.9's `onError`): samlify's bundled xmldom 0.8 typings declare
  // the same ambient module, and only the option both versions type-check is usable in one program
  return new DOMParser({
    errorHandler: (level: string, message: string) => {
      if (level !== 'warning') throw new Error(message);
    },
  }).parseFromString(xml, 'text/xml');
}
