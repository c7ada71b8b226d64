/**
 * @module @gatehouse/authn/domain/validation
 * The shared input rules of behaviour.md §3.1 (lengths, lists, app_data, email, phone, password) and
 * §7.4 (required_relations), applied to requests the codec has already given their proto types. Every
 * refusal is AppError `invalid_argument` with a message naming the field; nothing here throws
 * anything else.
 */
import { AppError } from '@gatehouse/errors';

const bad = (message: string): AppError => new AppError('invalid_argument', message);

/** A request field: absent and null both mean "not supplied" (behaviour.md §0.1 request nulls). */
export type Opt<T> = T | null | undefined;

/** Default maximum length of free-text fields (names, gender, birthdate, state, ...). */
export const MAX_FIELD_CHARS = 256;
/** `picture` and `redirect_uri` may be URLs: allow more. */
export const MAX_URL_CHARS = 2048;

/**
 * An optional text field of a request, at most `max` characters (UTF-16 code units, as JSON counts
 * them); null and absent are `undefined`.
 * @throws AppError `invalid_argument` `<field> must be at most <max> characters`
 */
export function optText(field: string, value: Opt<string>, max = MAX_FIELD_CHARS): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (value.length > max) throw bad(`${field} must be at most ${max} characters`);
  return value;
}

/**
 * A list of strings (`roles`, `scope`): entries trimmed, blanks dropped, duplicates removed;
 * an empty result is `undefined` ("not supplied"). An empty list allocates nothing.
 * @throws AppError `invalid_argument` `<field> must be a list of strings` (an entry over 256
 *   characters), `<field> must have at most <maxItems> entries`
 */
export function normaliseList(field: string, list: readonly string[], maxItems = 100): string[] | undefined {
  if (list.length === 0) return undefined;
  if (list.some((x) => x.length > MAX_FIELD_CHARS)) throw bad(`${field} must be a list of strings`);
  if (list.length > maxItems) throw bad(`${field} must have at most ${maxItems} entries`);
  const out = [...new Set(list.map((x) => x.trim()).filter(Boolean))];
  return out.length > 0 ? out : undefined;
}

/**
 * `app_data` (behaviour.md §3.1): a JSON object of at most 16 KiB serialised, returned as a copy;
 * null and absent are `undefined`. (A value that is not an object never gets here: the codec refuses
 * it as `malformed app_data`.)
 * @throws AppError `invalid_argument` `app_data too large`, `malformed app_data`
 */
export function checkAppData(value: Opt<Record<string, unknown>>): Record<string, unknown> | undefined {
  if (value === null || value === undefined) return undefined;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch {
    throw bad('malformed app_data');
  }
  if (Buffer.byteLength(json, 'utf8') > 16 * 1024) throw bad('app_data too large');
  return JSON.parse(json) as Record<string, unknown>;
}

/**
 * RFC 5322 addr-spec, practical form: a dot-atom local part (≤ 64 chars) and a domain of at least
 * two DNS labels. Quoted local parts, comments and IP-literal domains are refused: no mailbox
 * provider issues them and they are a common injection vector.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]";
const EMAIL_RE = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`);

/** Trims, lower-cases and validates an email (≤ 320 chars). @throws `invalid email address` */
export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (email.length > 320 || at < 1 || at > 64 || !EMAIL_RE.test(email)) throw bad('invalid email address');
  return email;
}

const PHONE_RE = /^\+?[0-9]{10,15}$/;

/** Trims and validates a phone number `^\+?[0-9]{10,15}$`. @throws `invalid phone number` */
export function normalisePhone(raw: string): string {
  const phone = raw.trim();
  if (!PHONE_RE.test(phone)) throw bad('invalid phone number');
  return phone;
}

export const PASSWORD_LENGTH_MESSAGE = 'password must be between 8 and 128 characters';
export const STRONG_PASSWORD_MESSAGE =
  'password is not valid. It needs to be at least 8 characters long and contain at least one number, one uppercase letter, one lowercase letter and one special character';

/**
 * The password policy (behaviour.md §3.1): 8–128 characters (Unicode code points), and with
 * `--enable-strong-password` an ASCII upper, an ASCII lower, a digit and one other character.
 */
export function checkPasswordPolicy(password: string, strong: boolean): void {
  const length = [...password].length;
  if (length < 8 || length > 128) throw bad(PASSWORD_LENGTH_MESSAGE);
  if (!strong) return;
  const ok = /[A-Z]/.test(password) && /[a-z]/.test(password) && /[0-9]/.test(password) && /[^A-Za-z0-9]/.test(password);
  if (!ok) throw bad(STRONG_PASSWORD_MESSAGE);
}

/** One `required_relations` entry (behaviour.md §7.4). */
export interface RequiredRelation {
  relation: string;
  object: string;
}

/** One `required_relations` entry as a request carries it: either field may be absent. */
export interface RelationInput {
  relation?: Opt<string>;
  object?: Opt<string>;
}

const NO_RELATIONS: readonly RequiredRelation[] = Object.freeze([]);

/**
 * `required_relations` (behaviour.md §7.4): 0–100 entries, neither field blank, both trimmed. An
 * empty list allocates nothing (the validation endpoints' common case).
 * @throws AppError `invalid_argument` `required_relations must have at most 100 entries`,
 *   `each required relation needs relation and object`
 */
export function requiredRelations(list: readonly RelationInput[]): readonly RequiredRelation[] {
  if (list.length === 0) return NO_RELATIONS;
  if (list.length > 100) throw bad('required_relations must have at most 100 entries');
  return list.map(({ relation, object }) => {
    if (!relation?.trim() || !object?.trim()) throw bad('each required relation needs relation and object');
    return { relation: relation.trim(), object: object.trim() };
  });
}
