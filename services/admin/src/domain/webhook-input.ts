/**
 * @module @gatehouse/admin/domain/webhook-input
 * The input rules shared by add_webhook, update_webhook and test_endpoint (behaviour.md §5.4): the
 * event name, the endpoint's length, and the configured headers.
 */
import { AppError } from '@gatehouse/errors';
import { WEBHOOK_EVENTS } from './events.ts';

/** behaviour.md §10: webhook headers ≤ 20. */
export const MAX_HEADERS = 20;
const MAX_ENDPOINT_CHARS = 2048;
const MAX_DESCRIPTION_CHARS = 1000;
const MAX_HEADER_NAME_CHARS = 256;
const MAX_HEADER_VALUE_CHARS = 4096;
/** Set by the worker on every delivery; a configured header cannot replace them (§5.4). */
const RESERVED = new Set(['content-type', 'content-length', 'host', 'x-service-signature']);
/** RFC 9110 §5.1 field-name token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** @throws AppError `invalid_argument` `invalid event name <x>` unless one of the 13 of §8 */
export function eventNameOf(name: string | null | undefined): string {
  const n = (name ?? '').trim();
  if (!WEBHOOK_EVENTS.includes(n)) throw new AppError('invalid_argument', `invalid event name ${name ?? ''}`);
  return n;
}

/** @throws AppError `invalid_argument` `empty endpoint not allowed` / `invalid endpoint: URL is too long` */
export function endpointText(endpoint: string | null | undefined): string {
  const e = (endpoint ?? '').trim();
  if (e === '') throw new AppError('invalid_argument', 'empty endpoint not allowed');
  if (e.length > MAX_ENDPOINT_CHARS) throw new AppError('invalid_argument', 'invalid endpoint: URL is too long');
  return e;
}

/** The stored description: as given, or the event name with `.` replaced by a space (§5.4). */
export function descriptionOf(description: string | null | undefined, eventName: string): string {
  const d = description?.trim() ?? '';
  if (d.length > MAX_DESCRIPTION_CHARS) throw new AppError('invalid_argument', `event_description must be at most ${MAX_DESCRIPTION_CHARS} characters`);
  return d === '' ? eventName.replaceAll('.', ' ') : d;
}

/**
 * Checks configured headers (§5.4): an object of at most 20 string values, valid names, none reserved.
 * @returns the headers with names as given; `{}` for null
 * @throws AppError `invalid_argument` `header <name> cannot be overridden`, `at most 20 headers are allowed`,
 *   `headers must be an object`, `header <name> must be a string`, `invalid header name <name>`
 */
export function headersOf(input: unknown): Record<string, string> {
  if (input === null || input === undefined) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw new AppError('invalid_argument', 'headers must be an object');
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) throw new AppError('invalid_argument', `at most ${MAX_HEADERS} headers are allowed`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (RESERVED.has(name.toLowerCase())) throw new AppError('invalid_argument', `header ${name} cannot be overridden`);
    if (!TOKEN.test(name) || name.length > MAX_HEADER_NAME_CHARS) throw new AppError('invalid_argument', `invalid header name ${name.slice(0, 64)}`);
    if (typeof value !== 'string') throw new AppError('invalid_argument', `header ${name} must be a string`);
    if (value.length > MAX_HEADER_VALUE_CHARS || /[\r\n\0]/.test(value)) throw new AppError('invalid_argument', `invalid value for header ${name}`);
    out[name] = value;
  }
  return out;
}
