/**
 * @module orgs/samlidp/providers
 * Service-provider records of the SAML identity-provider role (behaviour.md §5.9): create, update,
 * delete, get and list, with the §5.9 rules: `entity_id` unique within the org (409), `acs_url` an
 * http(s) URL, `sp_cert_pem` a PEM X.509 certificate, `name_id_format` one of the formats the IdP
 * issues (default emailAddress), `mapped_attributes` a JSON object of strings whose keys are user
 * fields and whose values are SAML attribute names. Issue 31 adds two optional fields:
 * `sp_encryption_cert_pem` (PEM X.509: assertions to the SP are encrypted with it, SAML Core §2.3.4)
 * and `slo_url` (http(s): the SP's SingleLogoutService, where the IdP's LogoutResponse goes).
 */
import { randomUUID, X509Certificate } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import type { SamlIdpDeps } from './deps.ts';
import type { ServiceProviderRecord } from './storage/ports.ts';
import { noEvents as none, type EventsOf } from '../storage/ports.ts';



export const SP_DELETED = 'service provider deleted';
export const SP_NOT_FOUND = 'service provider not found';
export const ACS_URL_INVALID = 'acs_url must be a valid http(s) URL';
export const SP_CERT_INVALID = 'sp_cert_pem must be a PEM-encoded X.509 certificate';
export const MAPPED_ATTRIBUTES_INVALID = 'mapped_attributes must be a JSON object of strings';
export const SP_ENCRYPTION_CERT_INVALID = 'sp_encryption_cert_pem must be a PEM-encoded X.509 certificate';
export const SLO_URL_INVALID = 'slo_url must be a valid http(s) URL';

/** SAML 2.0 Core §8.3 NameID formats the IdP issues; emailAddress is the §5.9 default. */
export const NAME_ID_FORMATS = {
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
} as const;
const FORMATS: readonly string[] = Object.values(NAME_ID_FORMATS);

/** The user fields `mapped_attributes` may name (the User record of authn, behaviour.md §2). */
export const MAPPABLE_FIELDS = [
  'id', 'email', 'given_name', 'family_name', 'middle_name', 'nickname', 'preferred_username', 'gender', 'birthdate',
  'phone_number', 'picture', 'roles',
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** @throws AppError `invalid_argument` `<field> is required` */
function required(v: string | null | undefined, field: string): string {
  const s = (v ?? '').trim();
  if (!s) throw new AppError('invalid_argument', `${field} is required`);
  return s;
}

/**
 * `acs_url` (or `slo_url`: `message` {@link SLO_URL_INVALID}) as given when it is an absolute http(s) URL.
 * @throws AppError `invalid_argument` `message`
 */
export function checkAcsUrl(raw: string, message = ACS_URL_INVALID): string {
  const s = raw.trim();
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new AppError('invalid_argument', message);
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || !u.hostname || s.length > 2048) throw new AppError('invalid_argument', message);
  return s;
}

/** `slo_url`: blank → null, else an http(s) URL. @throws AppError `invalid_argument` {@link SLO_URL_INVALID} */
const checkSloUrl = (raw: string | null | undefined): string | null => ((raw ?? '').trim() ? checkAcsUrl(raw!, SLO_URL_INVALID) : null);

/**
 * A PEM X.509 certificate, normalised to Node's PEM output; blank → null.
 * @param message the refusal ({@link SP_CERT_INVALID}, or {@link SP_ENCRYPTION_CERT_INVALID})
 * @throws AppError `invalid_argument` `message`
 */
export function checkCertPem(raw: string | null | undefined, message = SP_CERT_INVALID): string | null {
  const s = (raw ?? '').trim();
  if (!s) return null;
  if (!/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----$/.test(s) || s.length > 65536) throw new AppError('invalid_argument', message);
  try {
    return new X509Certificate(s).toString().trim();
  } catch {
    throw new AppError('invalid_argument', message);
  }
}

/** The NameID format; blank → emailAddress. @throws AppError `invalid_argument` */
export function checkNameIdFormat(raw: string | null | undefined): string {
  const s = (raw ?? '').trim();
  if (!s) return NAME_ID_FORMATS.email;
  if (!FORMATS.includes(s)) throw new AppError('invalid_argument', `name_id_format must be one of ${FORMATS.join(', ')}`);
  return s;
}

/** `mapped_attributes` as a canonical JSON string; blank → null. @throws AppError `invalid_argument` */
export function checkMappedAttributes(raw: string | null | undefined): string | null {
  const s = (raw ?? '').trim();
  if (!s) return null;
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    throw new AppError('invalid_argument', MAPPED_ATTRIBUTES_INVALID);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new AppError('invalid_argument', MAPPED_ATTRIBUTES_INVALID);
  const out: Record<string, string> = {};
  for (const [k, name] of Object.entries(v as Record<string, unknown>)) {
    if (typeof name !== 'string' || name.trim() === '') throw new AppError('invalid_argument', MAPPED_ATTRIBUTES_INVALID);
    if (!(MAPPABLE_FIELDS as readonly string[]).includes(k)) {
      throw new AppError('invalid_argument', `mapped_attributes: unknown user field "${k}" (one of ${MAPPABLE_FIELDS.join(', ')})`);
    }
    out[k] = name.trim();
  }
  return JSON.stringify(out);
}

const duplicate = (entityId: string): AppError =>
  new AppError('already_exists', `a service provider with entity_id "${entityId}" is already registered for this organization`);

/** @throws AppError `invalid_argument` `org_id is required`; `not_found` `organization not found` */
export async function existingOrg(d: SamlIdpDeps, raw: string | null | undefined): Promise<string> {
  const orgId = required(raw, 'org_id').toLowerCase();
  if (!UUID.test(orgId) || !(await d.orgs.get(orgId))) throw new AppError('not_found', 'organization not found');
  return orgId;
}

/** The fields of create_saml_service_provider (graphql.md §3.2). */
export interface CreateSpInput {
  org_id: string;
  name: string;
  entity_id: string;
  acs_url: string;
  sp_cert_pem?: string | null;
  name_id_format?: string | null;
  mapped_attributes?: string | null;
  allow_idp_initiated?: boolean | null;
  sp_encryption_cert_pem?: string | null;
  slo_url?: string | null;
}

/**
 * `create_saml_service_provider` → the record (active).
 * @throws AppError `invalid_argument` (the §5.9 messages); `not_found` `organization not found`; `already_exists` (entity_id taken in the org)
 */
export async function createProvider(d: SamlIdpDeps, input: CreateSpInput, events: EventsOf<ServiceProviderRecord> = none): Promise<ServiceProviderRecord> {
  const orgId = await existingOrg(d, input.org_id);
  const now = d.now();
  const entityId = required(input.entity_id, 'entity_id');
  const sp: ServiceProviderRecord = {
    id: randomUUID(), orgId, name: required(input.name, 'name'), entityId, acsUrl: checkAcsUrl(required(input.acs_url, 'acs_url')),
    spCertPem: checkCertPem(input.sp_cert_pem), spEncryptionCertPem: checkCertPem(input.sp_encryption_cert_pem, SP_ENCRYPTION_CERT_INVALID),
    sloUrl: checkSloUrl(input.slo_url), nameIdFormat: checkNameIdFormat(input.name_id_format),
    mappedAttributes: checkMappedAttributes(input.mapped_attributes), allowIdpInitiated: input.allow_idp_initiated ?? false,
    isActive: true, createdAt: now, updatedAt: now,
  };
  if (!(await d.store.providers.insert(sp, events(sp)))) throw duplicate(entityId);
  return sp;
}

/** The fields of update_saml_service_provider: only the supplied ones change. */
export interface UpdateSpInput {
  id: string;
  name?: string | null;
  entity_id?: string | null;
  acs_url?: string | null;
  sp_cert_pem?: string | null;
  name_id_format?: string | null;
  mapped_attributes?: string | null;
  allow_idp_initiated?: boolean | null;
  is_active?: boolean | null;
  sp_encryption_cert_pem?: string | null;
  slo_url?: string | null;
}

/** @throws AppError `invalid_argument` `id is required`; `not_found` `service provider not found` */
export async function getProvider(d: SamlIdpDeps, rawId: string | null | undefined): Promise<ServiceProviderRecord> {
  const id = required(rawId, 'id').toLowerCase();
  const sp = UUID.test(id) ? await d.store.providers.get(id) : null;
  if (!sp) throw new AppError('not_found', SP_NOT_FOUND);
  return sp;
}

/**
 * `update_saml_service_provider` → the record. A blank `sp_cert_pem` or `mapped_attributes` clears it.
 * @throws AppError `invalid_argument`; `not_found`; `already_exists` (entity_id taken in the org)
 */
export async function updateProvider(d: SamlIdpDeps, input: UpdateSpInput, events: EventsOf<ServiceProviderRecord> = none): Promise<ServiceProviderRecord> {
  const sp = await getProvider(d, input.id);
  const next: ServiceProviderRecord = {
    ...sp,
    name: input.name != null ? required(input.name, 'name') : sp.name,
    entityId: input.entity_id != null ? required(input.entity_id, 'entity_id') : sp.entityId,
    acsUrl: input.acs_url != null ? checkAcsUrl(input.acs_url) : sp.acsUrl,
    spCertPem: input.sp_cert_pem != null ? checkCertPem(input.sp_cert_pem) : sp.spCertPem,
    spEncryptionCertPem: input.sp_encryption_cert_pem != null ? checkCertPem(input.sp_encryption_cert_pem, SP_ENCRYPTION_CERT_INVALID) : sp.spEncryptionCertPem,
    sloUrl: input.slo_url != null ? checkSloUrl(input.slo_url) : sp.sloUrl,
    nameIdFormat: input.name_id_format != null ? checkNameIdFormat(input.name_id_format) : sp.nameIdFormat,
    mappedAttributes: input.mapped_attributes != null ? checkMappedAttributes(input.mapped_attributes) : sp.mappedAttributes,
    allowIdpInitiated: input.allow_idp_initiated ?? sp.allowIdpInitiated,
    isActive: input.is_active ?? sp.isActive,
    updatedAt: d.now(),
  };
  const out = await d.store.providers.update(next, events(next));
  if (out === 'missing') throw new AppError('not_found', SP_NOT_FOUND);
  if (out === 'conflict') throw duplicate(next.entityId);
  return next;
}

/** `delete_saml_service_provider` → the deleted record. @throws AppError `not_found` */
export async function deleteProvider(d: SamlIdpDeps, rawId: string | null | undefined, events: EventsOf<ServiceProviderRecord> = none): Promise<ServiceProviderRecord> {
  const sp = await getProvider(d, rawId);
  if (!(await d.store.providers.delete(sp.id, events(sp)))) throw new AppError('not_found', SP_NOT_FOUND);
  return sp;
}

/** The wire SAMLServiceProvider (graphql.md §3.1). */
export const providerWire = (sp: ServiceProviderRecord) => ({
  id: sp.id, org_id: sp.orgId, name: sp.name, entity_id: sp.entityId, acs_url: sp.acsUrl, sp_cert_pem: sp.spCertPem ?? undefined,
  name_id_format: sp.nameIdFormat, mapped_attributes: sp.mappedAttributes ?? undefined, allow_idp_initiated: sp.allowIdpInitiated,
  is_active: sp.isActive, created_at: sp.createdAt, updated_at: sp.updatedAt,
  sp_encryption_cert_pem: sp.spEncryptionCertPem ?? undefined, slo_url: sp.sloUrl ?? undefined,
});
