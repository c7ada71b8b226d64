/**
 * @module @gatehouse/rpc/input-rules
 * The one validation rule every string of every request obeys, at the contract boundary (issue 30 §5):
 * the codec (proto.ts) applies it to each `string` field of each RPC's request message, and to every
 * string inside a JSON-object (`google.protobuf.Struct`) field, on REST, GraphQL and gRPC alike, before
 * any handler or storage sees the value. The rule of a field is derived from the proto field's name:
 *
 * | kind | fields | allowed | max length |
 * |---|---|---|---|
 * | id | `id`, `*_id` (not `external_id`, `resource_id`, `sso_client_id`), `ids`, `*_ids` | visible ASCII (`!`…`~`), no inner space | 64 |
 * | text | documented to carry several lines: `dsl`, `template`, `body`, `html`, `design`, the PEM and XML fields, `credential`, `request`/`response` (SAML messages, webhook logs), `description`, `mapped_attributes`, … | any, except C0 controls other than tab, LF and CR, and DEL | 1 MiB |
 * | long | bearer values and secrets: `token`, `*_token`, `cookie`, `picture`, `query`, the password and secret fields | no C0 control, no DEL | 16 KiB |
 * | line | every other string | no C0 control, no DEL | 8192 |
 *
 * Lengths are counted in UTF-16 code units (JavaScript string length). A NUL byte is refused by every
 * kind: no value that could cut a C string or a SQL literal reaches a driver. A refusal is 400
 * `invalid_argument` naming the field: `<path> must be at most <n> characters`, or
 * `invalid value for field "<path>": <reason>` (`checks[2].object`). The limits are outer bounds: a
 * service's own, tighter limit on a field (`state` 2048, `nickname` 256) answers first below them.
 */

/** What a string of one field may hold. */
export interface TextRule {
  readonly kind: 'id' | 'text' | 'long' | 'line';
  readonly maxLength: number;
  /**
   * @returns null when `value` is allowed, else the reason: `must be at most 8192 characters` (a
   *   length), `control characters are not allowed`, `expected an id (visible ASCII characters)`
   */
  check(value: string): string | null;
}

/** Max lengths of each kind (UTF-16 code units). */
export const MAX_LENGTH = Object.freeze({ id: 64, text: 1024 * 1024, long: 16 * 1024, line: 8192 });

const MULTILINE_FIELDS: ReadonlySet<string> = new Set([
  'dsl', 'template', 'body', 'html', 'design', 'metadata', 'metadata_xml', 'sp_cert_pem', 'sp_encryption_cert_pem', 'cert_pem', 'certificate',
  'idp_certificate', 'credential', 'request', 'response', 'description', 'event_description', 'details', 'tree',
  'value', 'record_value', 'mapped_attributes', 'attribute_mapping', 'sealed_variables', 'message',
  'error_description', 'private_key', 'public_key', 'options',
]);
const LONG_FIELDS: ReadonlySet<string> = new Set([
  'token', 'cookie', 'picture', 'query', 'client_assertion', 'password', 'old_password', 'new_password', 'confirm_password',
  'confirm_new_password', 'admin_secret', 'client_secret', 'signing_secret',
]);
/** `*_id` names that are not Gatehouse ids: values chosen by an upstream system, free text by shape */
const NOT_IDS: ReadonlySet<string> = new Set(['external_id', 'resource_id', 'sso_client_id']);

// C0 controls and DEL; `text` fields keep tab, LF and CR (matching control characters is the point here)
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
// spaces around an id are the services' to trim (`{"id": " "}` is an absent id, not a malformed one)
const ID = /^ *[\u0021-\u007e]* *$/;
const CONTROLS = 'control characters are not allowed';

function lineRule(kind: 'line' | 'long' | 'text'): TextRule {
  const maxLength = MAX_LENGTH[kind];
  const forbidden = kind === 'text' ? CONTROL_BUT_WHITESPACE : CONTROL;
  const tooLong = `must be at most ${maxLength} characters`;
  return {
    kind,
    maxLength,
    check: (v) => (v.length > maxLength ? tooLong : forbidden.test(v) ? CONTROLS : null),
  };
}

const RULES = {
  id: {
    kind: 'id',
    maxLength: MAX_LENGTH.id,
    check: (v: string) => (v.length > MAX_LENGTH.id ? `must be at most ${MAX_LENGTH.id} characters` : ID.test(v) ? null : 'expected an id (visible ASCII characters)'),
  } satisfies TextRule,
  text: lineRule('text'),
  long: lineRule('long'),
  line: lineRule('line'),
} as const;

/**
 * The rule of the string field `name` (a proto field name, or a key inside a JSON-object field).
 * @param name snake_case field name as declared in the proto
 */
export function textRuleOf(name: string): TextRule {
  if (MULTILINE_FIELDS.has(name)) return RULES.text;
  if (LONG_FIELDS.has(name) || name.endsWith('_token')) return RULES.long;
  if (!NOT_IDS.has(name) && (name === 'id' || name === 'ids' || name.endsWith('_id') || name.endsWith('_ids'))) return RULES.id;
  return RULES.line;
}

/**
 * Checks every string (keys included) inside a JSON-object field's value (app_data, OAuth parameters,
 * SCIM bodies parsed into objects): `text` rules for values (JSON documents carry newlines), keys as
 * `line`. Nesting deeper than 32 levels is refused.
 * @returns null, or `[path, reason]` of the first refusal (`app_data.note`)
 */
export function checkJsonStrings(value: unknown, depth = 0): [string[], string] | null {
  if (depth > 32) return [[], 'nested too deeply'];
  if (typeof value === 'string') {
    const why = RULES.text.check(value);
    return why === null ? null : [[], why];
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = checkJsonStrings(value[i], depth + 1);
      if (found) return [[`[${i}]`, ...found[0]], found[1]];
    }
    return null;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const keyWhy = RULES.line.check(k);
      if (keyWhy !== null) return [[], `key: ${keyWhy}`];
      const found = checkJsonStrings(v, depth + 1);
      if (found) return [[k, ...found[0]], found[1]];
    }
  }
  return null;
}
