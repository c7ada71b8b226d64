/**
 * @module orgs/sso/storage/ports
 * What organization SSO stores in the orgs database (behaviour.md §6.3): one OIDC and one SAML
 * connection per org, the pending logins between our redirect to the IdP and its answer, and the ids
 * of SAML assertions already consumed (replay refusal across replicas). Times are Unix seconds.
 */
import type { OutboxEvent } from '../../storage/ports.ts';

/** An org's upstream OIDC connection. `clientSecretSealed` is AES-256-GCM under --encryption-key. */
export interface OidcConnectionRecord {
  id: string;
  orgId: string;
  name: string;
  /** https, globally unique */
  issuerUrl: string;
  clientId: string;
  clientSecretSealed: string;
  /** space-separated; null = the default `openid profile email` */
  scopes: string | null;
  /** null = the default `<url>/oauth/sso/<org name>/callback` (follows a rename) */
  redirectUri: string | null;
  isActive: boolean;
  createdAt: number;
  updatedAt: number;
}

/** The SAML bindings of our AuthnRequest. */
export type SamlBinding = 'HTTP-Redirect' | 'HTTP-POST';

/** An org's upstream SAML IdP connection (we are the SP). */
export interface SamlConnectionRecord {
  id: string;
  orgId: string;
  name: string;
  /** globally unique */
  idpEntityId: string;
  /** https: where the AuthnRequest goes */
  idpSsoUrl: string;
  /** how the AuthnRequest goes there (SAML Bindings §3.4 / §3.5); absent = HTTP-Redirect */
  idpSsoBinding?: SamlBinding | null;
  /** https: the IdP's SingleLogoutService (HTTP-Redirect); null = no Single Logout */
  idpSloUrl?: string | null;
  /** PEM X.509: verifies the IdP's signatures; write-only on the wire */
  idpCertificate: string;
  /** null = `<url>/oauth/saml/<org name>/metadata` */
  spEntityId: string | null;
  /** null = `<url>/oauth/saml/<org name>/acs` */
  acsUrl: string | null;
  /** a JSON object of strings: our field (`email`, `given_name`, `family_name`) → SAML attribute name */
  attributeMapping: string | null;
  allowIdpInitiated: boolean;
  isActive: boolean;
  createdAt: number;
  updatedAt: number;
  /**
   * Our SP key pair of this connection (SAML Metadata §2.4.1.1 KeyDescriptor `signing` and
   * `encryption`): the self-signed X.509 certificate (PEM) published in our metadata, and its RSA
   * private key (PKCS#8 PEM) AES-256-GCM sealed under the SSO ring with the associated data
   * `org_saml_connection:<id>`. Null on a connection made before SP keys (created on its first use).
   */
  spCertificate?: string | null;
  spPrivateKeySealed?: string | null;
  /**
   * A staged SP key pair (in-place rotation, step 1): published in our metadata beside the current one and
   * accepted for decryption, not used to sign yet. Sealed as the current one. Null when none is staged.
   */
  spNextCertificate?: string | null;
  spNextPrivateKeySealed?: string | null;
  /**
   * The SP key pair replaced by the last activation (step 2): still published and still decrypting,
   * until it is retired (step 3). Null when none.
   */
  spPreviousCertificate?: string | null;
  spPreviousPrivateKeySealed?: string | null;
}

/** One step of an SP key rotation in place: stage a new pair, make it the signing one, retire the old one. */
export type SpKeyStep = 'stage' | 'activate' | 'retire';

/** A login between our redirect to the IdP and its answer (single use). */
export interface PendingLoginRecord {
  /** the OIDC `state` / the SAML RelayState */
  id: string;
  orgId: string;
  /** `slo`: our LogoutRequest waiting for the IdP's LogoutResponse */
  kind: 'oidc' | 'saml' | 'slo';
  /** JSON: the flow's parameters (redirect_uri, state, roles, scope; PKCE verifier and nonce; AuthnRequest id) */
  data: string;
  expiresAt: number;
}

export interface SsoStore {
  oidc: {
    byId(id: string): Promise<OidcConnectionRecord | null>;
    byOrg(orgId: string): Promise<OidcConnectionRecord | null>;
    byIssuer(issuerUrl: string): Promise<OidcConnectionRecord | null>;
    /** `org` / `issuer` (nothing written) when a unique key is taken; `events` go to orgs' outbox with the row (issue 32 §1) */
    insert(c: OidcConnectionRecord, events?: readonly OutboxEvent[]): Promise<'ok' | 'org' | 'issuer'>;
    /** `issuer` (nothing written) when the new issuer is another connection's; `events` as for insert */
    update(c: OidcConnectionRecord, events?: readonly OutboxEvent[]): Promise<'ok' | 'issuer'>;
    /** false when there was none (no events written); `events` as for insert */
    delete(id: string, events?: readonly OutboxEvent[]): Promise<boolean>;
  };
  saml: {
    byId(id: string): Promise<SamlConnectionRecord | null>;
    byOrg(orgId: string): Promise<SamlConnectionRecord | null>;
    byEntityId(idpEntityId: string): Promise<SamlConnectionRecord | null>;
    /** `org` / `entity` (nothing written) when a unique key is taken; `events` go to orgs' outbox with the row (issue 32 §1) */
    insert(c: SamlConnectionRecord, events?: readonly OutboxEvent[]): Promise<'ok' | 'org' | 'entity'>;
    /** `entity` (nothing written) when the new entity id is another connection's; `events` as for insert */
    update(c: SamlConnectionRecord, events?: readonly OutboxEvent[]): Promise<'ok' | 'entity'>;
    /**
     * Stores the SP key pair of a connection that has none yet.
     * @returns false when another request stored one first (nothing written)
     */
    setSpKey(id: string, certPem: string, privateKeySealed: string): Promise<boolean>;
    /**
     * One step of an SP key rotation in place, atomic on the row: `stage` stores `fresh` as the next pair
     * (only when the connection has a current pair and neither a staged nor a previous one), `activate` makes the staged pair
     * current and keeps the replaced one as previous (only when one is staged), `retire` drops the
     * previous pair (only when there is one). `events` go to orgs' outbox with the change.
     * @returns false when the step does not apply to the row's state (nothing written, no events)
     */
    rotateSpKey(id: string, step: SpKeyStep, fresh?: { certPem: string; privateKeySealed: string }, events?: readonly OutboxEvent[]): Promise<boolean>;
    /** false when there was none (no events written); `events` as for insert */
    delete(id: string, events?: readonly OutboxEvent[]): Promise<boolean>;
  };
  pending: {
    put(p: PendingLoginRecord): Promise<void>;
    /** removes and returns the row (null when absent or expired at `now`): single use across replicas */
    take(id: string, now: number): Promise<PendingLoginRecord | null>;
  };
  /**
   * Records a consumed SAML assertion id until `expiresAt`.
   * @returns false when the id was already recorded (a replay), also by another replica
   */
  consumeAssertion(orgId: string, assertionId: string, expiresAt: number, now: number): Promise<boolean>;
}
