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
  return new DOMParser({
    onError: (level: string, message: string) => {
      if (level !== 'warning') throw new Error(message);
    },
  }).parseFromString(xml, 'text/xml');
}
