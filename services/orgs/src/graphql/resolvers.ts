/**
 * @module orgs/graphql/resolvers
 * The orgs subgraph's root fields → OrgsService RPCs (graphql.md §2), for
 * `bindResolvers(serviceDescriptor('orgs'), handlers, orgsBindings)`: the resolvers call the same
 * handlers as the gRPC server through the same proto codec (ARCHITECTURE §3).
 */
import type { FieldBinding, bindResolvers } from '@gatehouse/rpc';

const p = (rpc: string): FieldBinding => ({ rpc, arg: 'params' });

/** Root field → OrgsService RPC; every orgs operation takes its request as `params`. */
export const orgsBindings = {
  Query: {
    _organization: p('Organization'),
    _organizations: p('Organizations'),
    _org_members: p('OrgMembers'),
    _user_organizations: p('UserOrganizations'),
    _org_domains: p('OrgDomains'),
    _org_oidc_connection: p('OrgOidcConnection'),
    _org_saml_connection: p('OrgSamlConnection'),
    _scim_endpoint: p('ScimEndpoint'),
    // SAML identity-provider role (behaviour.md §5.9)
    _saml_service_provider: p('SamlServiceProvider'),
    _list_saml_service_providers: p('ListSamlServiceProviders'),
    // a bare GraphQL list, which REST wraps as {saml_idp_keys} (graphql.md D7)
    _list_saml_idp_keys: { rpc: 'ListSamlIdpKeys', arg: 'params', unwrap: 'saml_idp_keys' },
  },
  Mutation: {
    _create_organization: p('CreateOrganization'),
    _update_organization: p('UpdateOrganization'),
    _delete_organization: p('DeleteOrganization'),
    _add_org_member: p('AddOrgMember'),
    _remove_org_member: p('RemoveOrgMember'),
    _request_org_domain: p('RequestOrgDomain'),
    _verify_org_domain: p('VerifyOrgDomain'),
    _add_verified_org_domain: p('AddVerifiedOrgDomain'),
    _delete_org_domain: p('DeleteOrgDomain'),
    _create_org_oidc_connection: p('CreateOrgOidcConnection'),
    _update_org_oidc_connection: p('UpdateOrgOidcConnection'),
    _delete_org_oidc_connection: p('DeleteOrgOidcConnection'),
    _create_org_saml_connection: p('CreateOrgSamlConnection'),
    _update_org_saml_connection: p('UpdateOrgSamlConnection'),
    _delete_org_saml_connection: p('DeleteOrgSamlConnection'),
    _create_scim_endpoint: p('CreateScimEndpoint'),
    _rotate_scim_token: p('RotateScimToken'),
    _delete_scim_endpoint: p('DeleteScimEndpoint'),
    _create_saml_service_provider: p('CreateSamlServiceProvider'),
    _update_saml_service_provider: p('UpdateSamlServiceProvider'),
    _delete_saml_service_provider: p('DeleteSamlServiceProvider'),
    _rotate_saml_idp_cert: p('RotateSamlIdpCert'),
    _retire_saml_idp_key: p('RetireSamlIdpKey'),
    _import_saml_sp_metadata: p('ImportSamlSpMetadata'),
  },
} satisfies Parameters<typeof bindResolvers>[2];
