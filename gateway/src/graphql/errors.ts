/**
 * @module gateway/graphql/errors
 * The gateway's GraphQL error shaping (graphql.md §1.2, §5.3): `extensions` carries only `code`;
 * GraphQL-layer errors become INVALID_ARGUMENT; anything without a known code becomes INTERNAL with
 * the message `internal error`. `serviceName` and stack traces never reach the client, and neither
 * does a variable's value: graphql-js prints the whole value it could not coerce
 * (`Variable "$params" got invalid value { password: "…" }; …`), which would hand a password or a
 * client secret back in the error (issue 30 §5), so {@link redactVariableValue} keeps only the names.
 */
import type { GraphQLFormattedError } from 'graphql';
import { isErrorCode } from '@gatehouse/errors';

const GRAPHQL_LAYER_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'OPERATION_RESOLUTION_FAILURE']);
const PASSTHROUGH = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/** Reasons graphql-js gives for a variable that name no value: kept, or rewritten without the value. */
const VALUE_FREE_REASONS: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]> = [
  [/Field "(\w+)" of required type "([\w![\]]+)" was not provided\./, (m) => m[0]],
  [/Field "(\w+)" is not defined by type "(\w+)"\./, (m) => m[0]],
  [/Expected type "(\w+)" to be an object\./, (m) => m[0]],
  [/\b(String|Int|Float|Boolean|ID) cannot represent/, (m) => `${m[1]} cannot represent the value given.`],
  [/does not exist in "(\w+)" enum/, (m) => `the value is not one of enum "${m[1]}".`],
];

/**
 * `Variable "$p" got invalid value <the value>[ at "p.x"]; <reason>` without the value (and without a
 * value inside the reason); any other message unchanged.
 * @param message a GraphQL error message
 */
export function redactVariableValue(message: string): string {
  const head = /^Variable "(\$\w+)" got invalid value /.exec(message);
  if (!head) return message;
  const at = [...message.matchAll(/ at "([\w.[\]]+)"; /g)].pop()?.[1];
  let reason = '';
  for (const [re, keep] of VALUE_FREE_REASONS) {
    const m = re.exec(message.slice(head[0].length));
    if (m) { reason = `; ${keep(m)}`; break; }
  }
  return `Variable "${head[1]}" got invalid value${at ? ` at "${at}"` : ''}${reason}`;
}

/** Apollo `formatError` for the gateway. */
export function formatGatewayError(formatted: GraphQLFormattedError): GraphQLFormattedError {
  const raw = formatted.extensions?.code;
  const code = typeof raw === 'string' ? raw : '';
  let outCode: string;
  let message = redactVariableValue(formatted.message);
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
