/**
 * @module authz/openfga/client
 * The connection to an OpenFGA server (`--fga-store=openfga`, issue 21 §4) through `@openfga/sdk`: the
 * store it answers from, and the mapping of OpenFGA's errors to Gatehouse's (behaviour.md §7, spec §7).
 */
import { AppError } from '@gatehouse/errors';
import {
  CredentialsMethod, FgaApiAuthenticationError, FgaApiValidationError, OpenFgaClient, type CheckError, type UserClientConfigurationParams,
} from '@openfga/sdk';

/** Where the OpenFGA server is and which store Gatehouse uses there. */
export interface OpenFgaTarget {
  /** HTTP API base URL (`--fga-store-url`), e.g. `http://openfga:8080` */
  url: string;
  /** `--fga-store-id`; absent: the oldest store named {@link DEFAULT_STORE_NAME}, created when missing */
  storeId?: string | undefined;
  /** `--fga-store-api-token`, sent as `Authorization: Bearer <token>` */
  apiToken?: string | undefined;
}

/** The store Gatehouse creates and uses when no `--fga-store-id` is given. */
export const DEFAULT_STORE_NAME = 'gatehouse';

/** OpenFGA's error code for a resolution past its depth limit (its `--resolve-node-limit`, 25 by default). */
const TOO_COMPLEX = 'authorization_model_resolution_too_complex';

/**
 * OpenFGA's condition-evaluation message in the embedded engine's words where they say the same thing
 * (`failed to evaluate relationship condition 'c': tuple '…' is missing context parameters '[p]'`,
 * `parameter type error on condition 'c': failed to convert context parameter 'p': …`);
 * other texts pass as OpenFGA wrote them, without its internal `iterator: ` prefix.
 */
export function conditionMessage(message: string): string {
  const text = message.replace(/^(?:\w+: )*(?=failed to evaluate|parameter type error)/, '');
  const m = /^failed to evaluate relationship condition: '([^']+)' - (tuple .*)$/s.exec(text);
  if (m) return `failed to evaluate relationship condition '${m[1]}': ${m[2]}`;
  const p = /^(?:failed to evaluate relationship condition: )?parameter type error on condition '([^']+)' - (.*)$/s.exec(text);
  return p ? `parameter type error on condition '${p[1]}': ${p[2]}` : text;
}

/**
 * Maps what `@openfga/sdk` throws to Gatehouse's errors: a resolution past the depth limit is
 * `invalid_argument` `resolution too complex` (as the embedded engine says it); other validation
 * refusals are `invalid_argument` with OpenFGA's message (the backend validates input against the model
 * first, so these are rare); anything else (network, 5xx, refused credentials, unknown store) is
 * `unavailable` `authorization store is unavailable`, like a failing SQL store.
 */
export function fgaError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof FgaApiValidationError) {
    if (err.apiErrorCode === TOO_COMPLEX) return new AppError('invalid_argument', 'resolution too complex', { cause: err });
    return new AppError('invalid_argument', conditionMessage(err.apiErrorMessage ?? 'invalid request'), { cause: err });
  }
  const reason = err instanceof FgaApiAuthenticationError ? 'fga_store_auth' : 'fga_store_error';
  return new AppError('unavailable', 'authorization store is unavailable', { cause: err, reason });
}

/** The error of one BatchCheck item, as {@link fgaError} maps a whole call's. */
export function checkItemError(e: CheckError): AppError {
  if (e.input_error === TOO_COMPLEX) return new AppError('invalid_argument', 'resolution too complex');
  if (e.input_error !== undefined && String(e.input_error) !== 'no_error') return new AppError('invalid_argument', conditionMessage(e.message ?? 'invalid check'));
  return new AppError('unavailable', 'authorization store is unavailable', { reason: 'fga_store_error', cause: new Error(e.message ?? String(e.internal_error)) });
}

/**
 * Receives every OpenFGA call's outcome: its API method (`Check`, `BatchCheck`, `ListObjects`, …), `ok` or
 * the error class (`invalid` for OpenFGA's validation refusals, `unavailable` for the rest), and its
 * duration in seconds.
 */
export type OpenFgaObserver = (method: string, outcome: 'ok' | 'invalid' | 'unavailable', seconds: number) => void;

let observer: OpenFgaObserver | null = null;

/** Sets the process's {@link OpenFgaObserver} (authz's metrics; null: none). */
export function observeOpenFga(o: OpenFgaObserver | null): void {
  observer = o;
}

/**
 * Runs one OpenFGA call, reporting it to the {@link OpenFgaObserver}; every failure leaves as an AppError
 * ({@link fgaError}).
 * @param method the OpenFGA API method `work` calls (the metrics label)
 * @param work the call, just started
 */
export async function fga<T>(method: string, work: Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  try {
    const out = await work;
    observer?.(method, 'ok', Number(process.hrtime.bigint() - start) / 1e9);
    return out;
  } catch (err) {
    const mapped = fgaError(err);
    observer?.(method, mapped.code === 'invalid_argument' ? 'invalid' : 'unavailable', Number(process.hrtime.bigint() - start) / 1e9);
    throw mapped;
  }
}

/**
 * `/readyz` for the OpenFGA backend: resolves when the server answers for the configured store now
 * (GetStore, with the API token), so an unreachable server, refused credentials or a deleted store take
 * authz out of rotation.
 * @throws Error whose message is the cause
 */
export async function openFgaReady(client: OpenFgaClient): Promise<void> {
  try {
    await fga('GetStore', client.getStore());
  } catch (err) {
    const cause = (err as AppError).cause;
    throw new Error(cause instanceof Error ? cause.message : (err as Error).message);
  }
}

/**
 * Opens a client bound to the target's store: the given `storeId` (checked to exist), else the oldest
 * store named `gatehouse` (created when there is none; replicas that race to create it converge on the
 * oldest, since OpenFGA store ids are ULIDs).
 * @throws AppError `unavailable` when the server cannot be reached or refuses, or the given store does not exist
 */
export async function connectOpenFga(target: OpenFgaTarget): Promise<OpenFgaClient> {
  const base: UserClientConfigurationParams = {
    apiUrl: target.url.replace(/\/+$/, ''),
    // few, quick retries: a check waits on this, and a dead server should answer `unavailable` soon
    retryParams: { maxRetry: 2, minWaitInMs: 50 },
    ...(target.apiToken ? { credentials: { method: CredentialsMethod.ApiToken as const, config: { token: target.apiToken } } } : {}),
  };
  const client = new OpenFgaClient(base);
  let storeId = target.storeId;
  if (storeId) {
    await fga('GetStore', client.getStore({ storeId }));
  } else {
    storeId = await findStore(client) ?? await fga('CreateStore', client.createStore({ name: DEFAULT_STORE_NAME })).then(async () => (await findStore(client))!);
  }
  return new OpenFgaClient({ ...base, storeId });
}

/** The oldest store named {@link DEFAULT_STORE_NAME}, or undefined. */
async function findStore(client: OpenFgaClient): Promise<string | undefined> {
  const ids: string[] = [];
  let token: string | undefined;
  do {
    const page = await fga('ListStores', client.listStores({ pageSize: 100, ...(token ? { continuationToken: token } : {}) }));
    for (const s of page.stores ?? []) if (s.name === DEFAULT_STORE_NAME) ids.push(s.id);
    token = page.continuation_token || undefined;
  } while (token);
  return ids.sort()[0];
}
