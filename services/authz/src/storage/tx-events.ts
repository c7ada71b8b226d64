/**
 * @module authz/storage/tx-events
 * Events that commit with the engine's write (issue 32): an RPC that changes the store runs its write
 * inside {@link withTxEvents}, and the SQL store, in the transaction of that write, inserts the
 * events into authz's outbox (`authz_outbox`), so the audit row of an engine admin action is stored
 * with the change it describes, or not at all. The engine's interface stays as it is: the events
 * travel beside the call in an AsyncLocalStorage.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Envelope } from '@gatehouse/bus';

/** What a write made inside {@link withTxEvents} knows about itself when its transaction runs. */
export interface WriteInfo {
  /** the id of the model an `appendModel` stores */
  modelId?: string;
}

/** The events of one RPC's write: made when the store's transaction runs, at most once. */
export interface TxEvents {
  make(info: WriteInfo): Envelope[];
  /** true once a committed transaction stored them */
  written: boolean;
}

const current = new AsyncLocalStorage<TxEvents>();

/** Runs `write` with `events` for the store's transaction to take. */
export function withTxEvents<T>(events: TxEvents, write: () => Promise<T>): Promise<T> {
  return current.run(events, write);
}

/** The pending events of the write in progress, if it has any not yet stored. */
export function pendingTxEvents(): TxEvents | undefined {
  const events = current.getStore();
  return events && !events.written ? events : undefined;
}
