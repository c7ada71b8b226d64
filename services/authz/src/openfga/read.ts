/**
 * @module authz/openfga/read
 * fga/tuples/read (behaviour.md §7.1 Read) over OpenFGA's Read: the same exact filters, page sizes and
 * filter-bound opaque continuation token as the embedded engine. OpenFGA's Read filters only by object
 * (`type:id`, or `type:` together with a user); other filter combinations page through the store and
 * filter here.
 */
import { AppError } from '@gatehouse/errors';
import type { OpenFgaClient, ReadRequestTupleKey } from '@openfga/sdk';
import type { Tuple } from '../domain/object-ref.ts';
import type { parseReadQuery } from '../domain/tuple.ts';
import type { TupleFilter } from '../storage/ports.ts';
import { fga } from './client.ts';

/** Tuples per OpenFGA Read page (its maximum). */
const FGA_PAGE = 100;

/** Where the next page starts: OpenFGA's page token ('' = first page) and the entries of that page to skip. */
interface Cursor {
  t: string;
  k: number;
}

function encode(binding: string, c: Cursor): string {
  return Buffer.from(JSON.stringify({ b: binding, t: c.t, k: c.k }), 'utf8').toString('base64url');
}

function decode(token: string, binding: string): Cursor {
  try {
    const p = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { b?: unknown; t?: unknown; k?: unknown };
    if (p.b === binding && typeof p.t === 'string' && typeof p.k === 'number' && Number.isInteger(p.k) && p.k >= 0) return { t: p.t, k: p.k };
  } catch {
    // falls through to the refusal
  }
  throw new AppError('invalid_argument', 'invalid continuation token');
}

/** The part of the filter OpenFGA's Read can apply itself. */
function serverKey(f: TupleFilter): ReadRequestTupleKey | undefined {
  if (f.objectType !== undefined && f.objectId !== undefined) {
    return { object: `${f.objectType}:${f.objectId}`, ...(f.relation ? { relation: f.relation } : {}), ...(f.user ? { user: f.user } : {}) };
  }
  if (f.objectType !== undefined && f.user !== undefined) {
    return { object: `${f.objectType}:`, user: f.user, ...(f.relation ? { relation: f.relation } : {}) };
  }
  return undefined;
}

function matches(f: TupleFilter, t: Tuple): boolean {
  if (f.user !== undefined && t.user !== f.user) return false;
  if (f.relation !== undefined && t.relation !== f.relation) return false;
  if (f.objectType !== undefined) {
    const colon = t.object.indexOf(':');
    if (t.object.slice(0, colon) !== f.objectType) return false;
    if (f.objectId !== undefined && t.object.slice(colon + 1) !== f.objectId) return false;
  }
  return true;
}

/**
 * One page of matching tuples; the continuation token is null on the last page (a look-ahead finds
 * whether one more match exists, as the embedded store does).
 * @param query parseReadQuery of the request without its token
 * @param token the request's continuation token
 * @throws AppError `invalid_argument` `invalid continuation token`; `unavailable`
 */
export async function readPage(
  client: OpenFgaClient, query: ReturnType<typeof parseReadQuery>, token: string | null,
): Promise<{ tuples: Tuple[]; continuation_token: string | null; written_at: Array<number | null> }> {
  const { filter, pageSize, binding } = query;
  let cursor: Cursor = token ? decode(token, binding) : { t: '', k: 0 };
  const key = serverKey(filter);
  const tuples: Tuple[] = [];
  // each tuple's write time as the OpenFGA server answers it (ms; null when it gives none)
  const writtenAt: Array<number | null> = [];
  for (;;) {
    const page = await fga('Read', client.read(key ?? {}, { pageSize: FGA_PAGE, ...(cursor.t ? { continuationToken: cursor.t } : {}) }));
    const items = page.tuples ?? [];
    for (let i = cursor.k; i < items.length; i++) {
      const k = items[i]!.key;
      const t: Tuple = { user: k.user, relation: k.relation, object: k.object };
      if (k.condition) {
        // OpenFGA answers an absent context as {}; the embedded engine as null
        const context = k.condition.context as Record<string, unknown> | undefined;
        t.condition = { name: k.condition.name, context: context && Object.keys(context).length > 0 ? context : null };
      }
      if (!matches(filter, t)) continue;
      if (tuples.length === pageSize) return { tuples, continuation_token: encode(binding, { t: cursor.t, k: i }), written_at: writtenAt };
      tuples.push(t);
      const at = Date.parse(String(items[i]!.timestamp ?? ''));
      writtenAt.push(Number.isNaN(at) ? null : at);
    }
    if (!page.continuation_token) return { tuples, continuation_token: null, written_at: writtenAt };
    cursor = { t: page.continuation_token, k: 0 };
  }
}
