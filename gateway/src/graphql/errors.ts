/**
 * @module gateway/graphql/errors
 * The gateway's GraphQL error shaping (graphql.md §1.2, §5.3): `extensions` carries only `code`;
 * GraphQL-layer errors become INVALID_ARGUMENT; anything without a known code becomes INTERNAL with
 * the message `internal error`. `serviceName` and stack traces never reach the client.
 */
import type { GraphQLFormattedError } from 'graphql';
import { isErrorCode } from '@gatehouse/errors';

const GRAPHQL_LAYER_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE']);
const PASSTHROUGH = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/** Apollo `formatError` for the gateway. */
export function formatGatewayError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const raw = formatted.extensions?.code;
  const code = typeof raw === 'string' ? raw : '';
  let outCode: string;
  let message = formatted.message;
  if (PASSTHROUGH.has(code)) outCode = code;
  else if (GRAPHQL_LAYER_CODES.has(code)) outCode = 'INVALID_ARGUMENT';
  else if (isErrorCode(code.toLowerCase()) && code === code.toUpperCase()) outCode = code;
  else {
    outCode = 'INTERNAL';
    message = 'internal error';
  }
  return {
    message,
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: outCode },
  };
}
