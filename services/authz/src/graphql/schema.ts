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
  }

  input PermissionCheckInput {
    relation: String!
    object: String!
    contextual_tuples: [FgaTupleInput!]
  }

  input CheckPermissionsInput {
    checks: [PermissionCheckInput!]!
    user: String
  }

  input ListPermissionsInput {
    relation: String
    object_type: String
    user: String
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
    user_type: String!
  }

  input FgaExpandInput {
    relation: String!
    object: String!
  }
`;
