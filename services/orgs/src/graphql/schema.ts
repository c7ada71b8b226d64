/**
 * @module orgs/graphql/schema
 * The orgs subgraph (graphql.md §5.1): organizations and members, domains, the OIDC and SAML
 * connections, the SCIM endpoint and the SAML identity-provider role (§5.9, moved from admin in issue 20), with the names of graphql.md §2-§3. `Response`, `Pagination`
 * and `PaginationRequest` are identical to authn's and admin's (§5.2). `OrgMember` keeps
 * Authorizer's flat `email`, `given_name` and `family_name` and has no `user` field (§5.2).
 */
import { gql } from 'graphql-tag';
import { SHARED_SCALARS_SDL } from '@gatehouse/rpc';

export const orgsTypeDefs = gql`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@shareable"])
  ${SHARED_SCALARS_SDL}

  type Query {
    # organizations and members (behaviour.md §6.1)
    _organization(params: OrganizationRequest!): Organization!
    _organizations(params: ListOrganizationsRequest): Organizations!
    _org_members(params: ListOrgMembersRequest!): OrgMembers!
    _user_organizations(params: UserOrganizationsRequest!): UserOrganizations!
    # domains (behaviour.md §6.2)
    _org_domains(params: ListOrgDomainsRequest!): OrgDomains!
    # SSO connections (behaviour.md §6.3)
    _org_oidc_connection(params: OrgOIDCConnectionRequest!): OrgOIDCConnection!
    _org_saml_connection(params: OrgSAMLConnectionRequest!): OrgSAMLConnection!
    # SCIM endpoint (behaviour.md §6.4)
    _scim_endpoint(params: ScimEndpointRequest!): ScimEndpoint!
    # SAML identity-provider role (behaviour.md §5.9)
    _saml_service_provider(params: SAMLServiceProviderRequest!): SAMLServiceProvider!
    _list_saml_service_providers(params: ListSAMLServiceProvidersRequest!): SAMLServiceProviders!
    _list_saml_idp_keys(params: ListSAMLIDPKeysRequest!): [SAMLIDPKey!]!
  }

  type Mutation {
    # organizations and members (behaviour.md §6.1)
    _create_organization(params: CreateOrganizationRequest!): Organization!
    _update_organization(params: UpdateOrganizationRequest!): Organization!
    _delete_organization(params: OrganizationRequest!): Response!
    _add_org_member(params: AddOrgMemberRequest!): OrgMember!
    _remove_org_member(params: RemoveOrgMemberRequest!): Response!
    # domains (behaviour.md §6.2)
    _request_org_domain(params: RequestOrgDomainRequest!): OrgDomainChallenge!
    _verify_org_domain(params: VerifyOrgDomainRequest!): OrgDomain!
    _add_verified_org_domain(params: AddVerifiedOrgDomainRequest!): OrgDomain!
    _delete_org_domain(params: DeleteOrgDomainRequest!): Response!
    # SSO connections (behaviour.md §6.3)
    _create_org_oidc_connection(params: CreateOrgOIDCConnectionRequest!): OrgOIDCConnection!
    _update_org_oidc_connection(params: UpdateOrgOIDCConnectionRequest!): OrgOIDCConnection!
    _delete_org_oidc_connection(params: OrgOIDCConnectionRequest!): Response!
    _create_org_saml_connection(params: CreateOrgSAMLConnectionRequest!): OrgSAMLConnection!
    _update_org_saml_connection(params: UpdateOrgSAMLConnectionRequest!): OrgSAMLConnection!
    _delete_org_saml_connection(params: OrgSAMLConnectionRequest!): Response!
    # SCIM endpoint (behaviour.md §6.4)
    _create_scim_endpoint(params: CreateScimEndpointRequest!): CreateScimEndpointResponse!
    _rotate_scim_token(params: ScimEndpointRequest!): CreateScimEndpointResponse!
    _delete_scim_endpoint(params: ScimEndpointRequest!): Response!
    # SAML identity-provider role (behaviour.md §5.9)
    _create_saml_service_provider(params: CreateSAMLServiceProviderRequest!): SAMLServiceProvider!
    _update_saml_service_provider(params: UpdateSAMLServiceProviderRequest!): SAMLServiceProvider!
    _delete_saml_service_provider(params: SAMLServiceProviderRequest!): Response!
    _rotate_saml_idp_cert(params: RotateSAMLIDPCertRequest!): SAMLIDPKey!
    _retire_saml_idp_key(params: RetireSAMLIDPKeyRequest!): Response!
    _import_saml_sp_metadata(params: ImportSAMLSPMetadataRequest!): SAMLSPMetadataParseResult!
  }

  type Response @shareable {
    message: String!
  }

  type Pagination @shareable {
    limit: Int64!
    page: Int64!
    offset: Int64!
    total: Int64!
  }

  input PaginationRequest {
    limit: Int64
    page: Int64
  }

  # organizations and members (behaviour.md §6.1)
  type Organization {
    id: ID!
    name: String!
    display_name: String
    enabled: Boolean!
    created_at: Int64
    updated_at: Int64
  }

  type Organizations {
    pagination: Pagination!
    organizations: [Organization!]!
  }

  type UserOrganization {
    organization: Organization!
    roles: [String!]!
  }

  type UserOrganizations {
    pagination: Pagination!
    user_organizations: [UserOrganization!]!
  }

  type OrgMember {
    id: ID!
    org_id: String!
    user_id: String!
    email: String
    given_name: String
    family_name: String
    roles: [String!]!
    created_at: Int64
    updated_at: Int64
  }

  type OrgMembers {
    pagination: Pagination!
    org_members: [OrgMember!]!
  }

  input CreateOrganizationRequest {
    name: String!
    display_name: String
  }

  input UpdateOrganizationRequest {
    id: ID!
    name: String
    display_name: String
    enabled: Boolean
  }

  input OrganizationRequest {
    id: ID!
  }

  input ListOrganizationsRequest {
    pagination: PaginationRequest
  }

  input UserOrganizationsRequest {
    user_id: String!
    pagination: PaginationRequest
  }

  input AddOrgMemberRequest {
    org_id: String!
    user_id: String!
    roles: [String!]
  }

  input RemoveOrgMemberRequest {
    org_id: String!
    user_id: String!
  }

  input ListOrgMembersRequest {
    org_id: String!
    pagination: PaginationRequest
  }

  # domains (behaviour.md §6.2)
  type OrgDomain {
    domain: String!
    org_id: String!
    verified_at: Int64
    challenge_expires_at: Int64
    created_at: Int64
    updated_at: Int64
  }

  type OrgDomains {
    pagination: Pagination!
    org_domains: [OrgDomain!]!
  }

  type OrgDomainChallenge {
    domain: String!
    record_type: String!
    record_name: String!
    record_value: String!
    expires_at: Int64!
  }

  input RequestOrgDomainRequest {
    org_id: String!
    domain: String!
  }

  input VerifyOrgDomainRequest {
    org_id: String!
    domain: String!
  }

  input AddVerifiedOrgDomainRequest {
    org_id: String!
    domain: String!
  }

  input ListOrgDomainsRequest {
    org_id: String!
    pagination: PaginationRequest
  }

  input DeleteOrgDomainRequest {
    domain: String!
    org_id: String
  }

  # SSO connections (behaviour.md §6.3)
  type OrgOIDCConnection {
    id: ID!
    org_id: String!
    name: String!
    issuer_url: String!
    sso_client_id: String!
    scopes: String
    redirect_uri: String
    is_active: Boolean!
    created_at: Int64
    updated_at: Int64
  }

  type OrgSAMLConnection {
    id: ID!
    org_id: String!
    name: String!
    idp_entity_id: String!
    idp_sso_url: String
    sp_entity_id: String
    acs_url: String
    attribute_mapping: String
    allow_idp_initiated: Boolean!
    is_active: Boolean!
    created_at: Int64
    updated_at: Int64
  }

  input CreateOrgOIDCConnectionRequest {
    org_id: String!
    name: String!
    issuer_url: String!
    client_id: String!
    client_secret: String!
    scopes: String
    redirect_uri: String
  }

  input UpdateOrgOIDCConnectionRequest {
    id: ID!
    name: String
    issuer_url: String
    client_id: String
    client_secret: String
    scopes: String
    redirect_uri: String
    is_active: Boolean
  }

  input OrgOIDCConnectionRequest {
    id: ID
    org_id: String
  }

  input CreateOrgSAMLConnectionRequest {
    org_id: String!
    name: String!
    idp_entity_id: String!
    idp_sso_url: String!
    idp_certificate: String!
    sp_entity_id: String
    acs_url: String
    attribute_mapping: String
    allow_idp_initiated: Boolean
  }

  input UpdateOrgSAMLConnectionRequest {
    id: ID!
    name: String
    idp_entity_id: String
    idp_sso_url: String
    idp_certificate: String
    sp_entity_id: String
    acs_url: String
    attribute_mapping: String
    allow_idp_initiated: Boolean
    is_active: Boolean
  }

  input OrgSAMLConnectionRequest {
    id: ID
    org_id: String
  }

  # SCIM endpoint (behaviour.md §6.4)
  type ScimEndpoint {
    id: ID!
    org_id: String!
    enabled: Boolean!
    created_at: Int64
    updated_at: Int64
  }

  type CreateScimEndpointResponse {
    scim_endpoint: ScimEndpoint!
    token: String!
  }

  input CreateScimEndpointRequest {
    org_id: String!
  }

  input ScimEndpointRequest {
    org_id: String!
  }

  # SAML identity-provider role (behaviour.md §5.9)
  type SAMLServiceProvider {
    id: ID!
    org_id: String!
    name: String!
    entity_id: String!
    acs_url: String!
    sp_cert_pem: String
    name_id_format: String
    mapped_attributes: String
    allow_idp_initiated: Boolean!
    is_active: Boolean!
    created_at: Int64
    updated_at: Int64
  }

  type SAMLServiceProviders {
    pagination: Pagination!
    saml_service_providers: [SAMLServiceProvider!]!
  }

  type SAMLIDPKey {
    id: ID!
    org_id: String!
    cert_pem: String!
    algorithm: String!
    status: String!
    created_at: Int64
    updated_at: Int64
  }

  type SAMLSPMetadataParseResult {
    entity_id: String!
    acs_url: String!
    certificate: String
  }

  input CreateSAMLServiceProviderRequest {
    org_id: String!
    name: String!
    entity_id: String!
    acs_url: String!
    sp_cert_pem: String
    name_id_format: String
    mapped_attributes: String
    allow_idp_initiated: Boolean
  }

  input UpdateSAMLServiceProviderRequest {
    id: ID!
    name: String
    entity_id: String
    acs_url: String
    sp_cert_pem: String
    name_id_format: String
    mapped_attributes: String
    allow_idp_initiated: Boolean
    is_active: Boolean
  }

  input SAMLServiceProviderRequest {
    id: ID!
  }

  input ListSAMLServiceProvidersRequest {
    org_id: String!
    pagination: PaginationRequest
  }

  input RotateSAMLIDPCertRequest {
    org_id: String!
  }

  input RetireSAMLIDPKeyRequest {
    id: ID!
  }

  input ListSAMLIDPKeysRequest {
    org_id: String!
  }

  input ImportSAMLSPMetadataRequest {
    metadata_xml: String!
  }
`;
