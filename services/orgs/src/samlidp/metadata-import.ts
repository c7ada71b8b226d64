/**
 * @module orgs/samlidp/metadata-import
 * `import_saml_sp_metadata` (behaviour.md §5.9): reads pasted SAML 2.0 metadata (SAML Metadata §2.3.2
 * EntityDescriptor, §2.4.4 SPSSODescriptor) and returns the SP's entity ID, its Assertion Consumer
 * Service URL, its signing certificate, its encryption certificate (§2.4.1.1 KeyDescriptor
 * `use="encryption"`) and its SingleLogoutService URL (§2.2.2.2, §2.4.2). It parses only (@xmldom/xmldom): nothing is fetched and
 * nothing is created. At most 1 MiB; a document with a DOCTYPE (and so any entity declaration: XXE,
 * entity expansion) is refused before parsing.
 */
import { X509Certificate } from 'node:crypto';
import type { Element as XmlElement } from '@xmldom/xmldom';
import { AppError } from '@gatehouse/errors';
import { parseStrictXml } from './xml.ts';

export const METADATA_MAX_BYTES = 1024 * 1024;
export const NO_SP_IN_METADATA = 'metadata did not contain an SP entity ID and Assertion Consumer Service URL';
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

const unparsable = (reason: string): AppError => new AppError('invalid_argument', `could not parse SP metadata XML: ${reason}`);

/** The result of an import (graphql.md §3.1 SAMLSPMetadataParseResult). */
export interface SpMetadata {
  entity_id: string;
  acs_url: string;
  certificate?: string;
  /** extension (issue 31): the `use="encryption"` certificate (an unqualified one when there is none) */
  encryption_certificate?: string;
  /** extension (issue 31): the SingleLogoutService Location (HTTP-Redirect, else HTTP-POST) */
  slo_url?: string;
}

const children = (parent: XmlElement, ns: string, local: string): XmlElement[] =>
  Array.from(parent.getElementsByTagNameNS(ns, local) as unknown as ArrayLike<XmlElement>);

/** Wraps the base64 body of a ds:X509Certificate as PEM (RFC 7468 §5). */
function pemOf(b64: string): string {
  const body = b64.replace(/\s+/g, '');
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----`;
}

/** The ACS an IdP should use: HTTP-POST first, then `isDefault="true"`, then the lowest `index`. */
function pickAcs(sp: XmlElement): string | null {
  const all = children(sp, MD, 'AssertionConsumerService')
    .map((e) => ({ binding: e.getAttribute('Binding') ?? '', location: (e.getAttribute('Location') ?? '').trim(), isDefault: e.getAttribute('isDefault') === 'true', index: Number(e.getAttribute('index') ?? '0') || 0 }))
    .filter((a) => a.location !== '');
  if (all.length === 0) return null;
  all.sort((a, b) => Number(b.binding === POST) - Number(a.binding === POST) || Number(b.isDefault) - Number(a.isDefault) || a.index - b.index);
  return all[0]!.location;
}

/**
 * The SingleLogoutService an IdP should send to (SAML Metadata §2.2.2, §2.4.2): HTTP-Redirect first,
 * then HTTP-POST (the bindings this IdP speaks); its `Location`.
 */
function pickSlo(sp: XmlElement): string | undefined {
  const all = children(sp, MD, 'SingleLogoutService')
    .map((e) => ({ binding: e.getAttribute('Binding') ?? '', location: (e.getAttribute('Location') ?? '').trim() }))
    .filter((s) => s.location !== '' && (s.binding === REDIRECT || s.binding === POST));
  all.sort((a, b) => Number(b.binding === REDIRECT) - Number(a.binding === REDIRECT));
  return all[0]?.location;
}

/**
 * The certificate of the first KeyDescriptor with `use` = `purpose`, else of the first without `use`
 * (SAML Metadata §2.4.1.1: a key without `use` serves both purposes).
 */
function pickCertificate(sp: XmlElement, purpose: 'signing' | 'encryption'): string | undefined {
  const descriptors = children(sp, MD, 'KeyDescriptor');
  const ordered = [...descriptors.filter((k) => k.getAttribute('use') === purpose), ...descriptors.filter((k) => !k.getAttribute('use'))];
  for (const k of ordered) {
    const text = children(k, DS, 'X509Certificate')[0]?.textContent?.trim();
    if (!text) continue;
    const pem = pemOf(text);
    try {
      new X509Certificate(pem);
    } catch {
      throw unparsable(`the ${purpose} certificate is not an X.509 certificate`);
    }
    return pem;
  }
  return undefined;
}

/**
 * Parses SP metadata (an EntityDescriptor, or the first EntityDescriptor with an SPSSODescriptor of
 * an EntitiesDescriptor).
 * @throws AppError `invalid_argument`: `metadata_xml is required`, `metadata_xml must be at most 1 MiB`,
 *   `could not parse SP metadata XML: <reason>` (also when the chosen signing or encryption certificate
 *   is no X.509 certificate), or `metadata did not contain an SP entity ID and Assertion Consumer Service URL`
 */
export function parseSpMetadata(xml: string | null | undefined): SpMetadata {
  const text = xml ?? '';
  if (text.trim() === '') throw new AppError('invalid_argument', 'metadata_xml is required');
  if (Buffer.byteLength(text, 'utf8') > METADATA_MAX_BYTES) throw new AppError('invalid_argument', 'metadata_xml must be at most 1 MiB');
  let doc;
  try {
    doc = parseStrictXml(text.trim());
  } catch (err) {
    throw unparsable(((err as Error).message || 'malformed XML').split('\n')[0]!.replace(/^\[xmldom [^\]]*\]\s*/, '').slice(0, 200));
  }
  const root = doc.documentElement;
  if (!root) throw unparsable('no root element');
  const entities = root.namespaceURI === MD && root.localName === 'EntityDescriptor' ? [root] : children(root, MD, 'EntityDescriptor');
  for (const entity of entities) {
    const sp = children(entity, MD, 'SPSSODescriptor')[0];
    const entityId = (entity.getAttribute('entityID') ?? '').trim();
    const acs = sp ? pickAcs(sp) : null;
    if (sp && entityId && acs) {
      const certificate = pickCertificate(sp, 'signing');
      const encryption = pickCertificate(sp, 'encryption');
      const slo = pickSlo(sp);
      return {
        entity_id: entityId, acs_url: acs, ...(certificate ? { certificate } : {}),
        ...(encryption ? { encryption_certificate: encryption } : {}), ...(slo ? { slo_url: slo } : {}),
      };
    }
  }
  throw new AppError('invalid_argument', NO_SP_IN_METADATA);
}
