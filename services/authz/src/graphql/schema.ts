/**
 * @module authz/graphql/schema
 * The authz subgraph: `check_permissions`, `list_permissions` and the `_fga_*` admin operations,
 * with the names of graphql.md §2-§3.
 */
import { gql } from 'graphql-tag';
import { SHARED_SCALARS_SDL } from '@gatehouse/rpc';

export const authzTypeDefs = gql`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@shareable"])
  ${SHARED_SCALARS_SDL}

  type Query {
    check_permissions(params: CheckPermissionsInput!): CheckPermissionsResponse!
    list_permissions(params: ListPermissionsInput!): ListPermissionsResponse!
    _fga_get_model: FgaModel!
    _fga_read_tuples(params: FgaReadTuplesInput!): FgaTuples!
    _fga_list_users(params: FgaListUsersInput!): FgaListUsersResponse!
    _fga_expand(params: FgaExpandInput!): FgaExpandResponse!
  }

  type Mutation {
    _fga_write_model(params: FgaWriteModelInput!): FgaModel!
    _fga_write_tuples(params: FgaWriteTuplesInput!): Response!
    _fga_delete_tuples(params: FgaWriteTuplesInput!): Response!
    _fga_reset: Response!
  }

  type Response @shareable {
    message: String!
  }

  type FgaModel {
    id: String!
    dsl: String!
  }

  type FgaTuple {
    user: String!
    relation: String!
    object: String!
    "Extension (OpenFGA conditions): the tuple's condition, null when it has none."
    condition: FgaTupleCondition
  }

  type FgaTupleCondition {
    name: String!
    context: Map
  }

  type FgaTuples {
    tuples: [FgaTuple!]!
    continuation_token: String
  }

  type FgaListUsersResponse {
    users: [String!]!
    truncated: Boolean!
  }

  type FgaExpandResponse {
    tree: String!
  }

  type PermissionCheckResult {
    relation: String!
    object: String!
    allowed: Boolean!
  }

  type CheckPermissionsResponse {
    results: [PermissionCheckResult!]!
  }

  type Permission {
    object: String!
    relation: String!
  }

  type ListPermissionsResponse {
    objects: [String!]!
    permissions: [Permission!]!
    truncated: Boolean!
  }

  input FgaTupleInput {
    user: String!
    relation: String!
    object: String!
    "Extension (OpenFGA conditions): a condition of the model and the tuple's own context."
    condition: FgaTupleConditionInput
  }

  input FgaTupleConditionInput {
    name: String!
    context: Map
  }

  input PermissionCheckInput {
    relation: String!
    object: String!
    contextual_tuples: [FgaTupleInput!]
    "Extension: this check's condition context, over the call's."
    context: Map
  }

  input CheckPermissionsInput {
    checks: [PermissionCheckInput!]!
    user: String
    "Extension: the condition context of every check."
    context: Map
  }

  input ListPermissionsInput {
    relation: String
    object_type: String
    user: String
    "Extension: contextual tuples (at most 100)."
    contextual_tuples: [FgaTupleInput!]
    "Extension: the condition context."
    context: Map
  }

  input FgaWriteModelInput {
    dsl: String!
  }

  input FgaWriteTuplesInput {
    tuples: [FgaTupleInput!]!
  }

  input FgaReadTuplesInput {
    user: String
    relation: String
    object: String
    page_size: Int64
    continuation_token: String
  }

  input FgaListUsersInput {
    object: String!
    relation: String!
    "A type, or a userset filter type#relation (extension)."
    user_type: String!
    "Extension: contextual tuples (at most 100)."
    contextual_tuples: [FgaTupleInput!]
    "Extension: the condition context."
    context: Map
  }

  input FgaExpandInput {
    relation: String!
    object: String!
  }
`;
