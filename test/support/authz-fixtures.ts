/**
 * @module test/support/authz-fixtures
 * The small document-sharing model the authz e2e tests use (behaviour.md §7.1: OpenFGA DSL 1.1 with
 * direct types, usersets, wildcards and `or`), and helpers that page through or empty a store.
 */
import { createCallContext } from '@gatehouse/rpc';
import { authzGrpcClient } from './authz-surfaces.ts';

export const DOCS_MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type doc
  relations
    define owner: [user]
    define editor: [user, group#member] or owner
    define viewer: [user, user:*, group#member] or editor
`;

/** ULID: 26 Crockford base-32 characters (behaviour.md §0.1 IDs). */
export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export interface WireTuple {
  user: string;
  relation: string;
  object: string;
  /** the tuple's condition (extension); readAll leaves it out when the tuple has none */
  condition?: { name: string; context: Record<string, unknown> | null } | null;
}

/** Reads every tuple matching `filter` through the gRPC port at `address`, 100 per page, as super-admin. */
export async function readAll(address: string, adminSecret: string, filter: Partial<WireTuple> = {}): Promise<WireTuple[]> {
  const client = authzGrpcClient(address);
  const ctx = () => createCallContext({ headers: { 'x-service-admin-secret': adminSecret } });
  const out: WireTuple[] = [];
  let token: string | null = null;
  do {
    const page = await client.call('ReadTuples', { ...filter, page_size: 100, ...(token ? { continuation_token: token } : {}) }, ctx());
    for (const t of page.tuples as WireTuple[]) {
      const { condition, ...key } = t;
      out.push(condition ? { ...key, condition } : key);
    }
    token = (page.continuation_token as string | null) || null;
  } while (token);
  return out;
}

/** Writes (or deletes) `tuples` in calls of 100 through gRPC at `address`, as super-admin, `concurrency` calls at a time. */
export async function inBatches(address: string, adminSecret: string, rpc: 'WriteTuples' | 'DeleteTuples', tuples: readonly WireTuple[], concurrency = 4): Promise<void> {
  const client = authzGrpcClient(address);
  const batches: WireTuple[][] = [];
  for (let i = 0; i < tuples.length; i += 100) batches.push(tuples.slice(i, i + 100));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      await client.call(rpc, { tuples: batch }, createCallContext({ headers: { 'x-service-admin-secret': adminSecret } }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
}

/** Deletes every tuple in the store (so `fga/reset` is allowed, behaviour.md §7.1). */
export async function deleteAllTuples(address: string, adminSecret: string): Promise<number> {
  const all = await readAll(address, adminSecret);
  await inBatches(address, adminSecret, 'DeleteTuples', all);
  return all.length;
}
