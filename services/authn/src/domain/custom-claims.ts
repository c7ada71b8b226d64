/**
 * @module @gatehouse/authn/domain/custom-claims
 * `--custom-access-token-script` (behaviour.md §2.1 "Custom claims"): `function(user, tokenPayload)`
 * returning an object whose non-reserved keys are merged into the access and ID tokens.
 *
 * The script runs in QuickJS compiled to WebAssembly (`quickjs-emscripten`), on a worker thread
 * (./custom-claims-worker.ts) that is terminated when a call overruns, so the server's event loop is
 * never held by a script: a separate JavaScript
 * engine whose heap is a WASM memory, with no `process`, `require`, `fetch`, timers, file system or
 * network, and no object of this process reachable from it (issue 18 item 6). Each call gets a fresh
 * context (no state survives between tokens) on a runtime with a heap cap
 * ({@link CUSTOM_CLAIMS_MEMORY_BYTES}), a stack cap and an interrupt handler that stops the script at
 * the §2.1 budget ({@link CUSTOM_CLAIMS_TIMEOUT_MS}). Values cross as JSON text only: `user` and
 * `tokenPayload` go in as JSON, the result comes out as JSON. A throw, a timeout, the heap cap, a
 * non-object result → `{}` and one `warn` line; reserved claims are dropped with a `warn` line.
 */
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import type { Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';

/** Claims a script may never set (behaviour.md §2.1). */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(
  'sub iss aud exp iat nbf jti token_type roles allowed_roles scope nonce login_method auth_time amr acr at_hash c_hash client_id family_id sid act cnf'.split(' '),
);

/** The §2.1 budget of one run, in ms (wall clock, enforced by QuickJS's interrupt handler). */
export const CUSTOM_CLAIMS_TIMEOUT_MS = 500;
/** Heap cap of the sandbox in bytes: allocation past it fails inside the script with "out of memory". */
export const CUSTOM_CLAIMS_MEMORY_BYTES = 16 * 1024 * 1024;
/** Stack cap of the sandbox in bytes: unbounded recursion fails with a RangeError. */
export const CUSTOM_CLAIMS_STACK_BYTES = 256 * 1024;
/** Largest JSON text accepted back from a script, in characters (a token must stay a header-sized thing). */
export const CUSTOM_CLAIMS_MAX_JSON = 16 * 1024;

/** Resolves with the claims to merge; never rejects. */
export type CustomClaims = ((user: unknown, tokenPayload: unknown) => Promise<Record<string, unknown>>) & {
  /** terminates the sandbox's worker thread (service shutdown) */
  close(): Promise<void>;
};

/** Extra time over the budget before the worker thread is terminated, in ms (a stuck native call). */
export const CUSTOM_CLAIMS_KILL_GRACE_MS = 250;

type Reply = { id: number; json: string } | { id: number; error: string };

/**
 * The worker thread that hosts QuickJS: one per script, started on first use, replaced after it
 * was terminated. A call resolves with the worker's reply, or with `{ error }` once the budget plus
 * {@link CUSTOM_CLAIMS_KILL_GRACE_MS} has passed since the worker began it (the worker is then
 * terminated, so a hostile script costs this process at most that long, on another thread).
 */
function sandboxWorker(source: string): { call(user: unknown, payload: unknown): Promise<{ json: string } | { error: string }>; close(): Promise<void> } {
  let worker: Worker | undefined;
  let ready: Promise<void> | undefined;
  let nextId = 1;
  const pending = new Map<number, (r: { json: string } | { error: string }) => void>();
  const failAll = (error: string): void => {
    for (const settle of pending.values()) settle({ error });
    pending.clear();
  };
  const start = (): Promise<void> => {
    const w = new Worker(new URL('./custom-claims-worker.ts', import.meta.url), {
      workerData: { source, timeoutMs: CUSTOM_CLAIMS_TIMEOUT_MS, memoryBytes: CUSTOM_CLAIMS_MEMORY_BYTES, stackBytes: CUSTOM_CLAIMS_STACK_BYTES },
      // the worker's own V8 heap stays small too: QuickJS's WASM memory lives in it
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16 },
    });
    w.unref();
    worker = w;
    const up = new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
    w.on('message', (m: Reply | { ready: true }) => {
      if (!('id' in m)) return;
      const settle = pending.get(m.id);
      pending.delete(m.id);
      settle?.('json' in m ? { json: m.json } : { error: m.error });
    });
    w.on('error', (err) => { if (worker === w) { worker = undefined; ready = undefined; } failAll(err.message); });
    w.on('exit', () => { if (worker === w) { worker = undefined; ready = undefined; } failAll('the sandbox stopped'); });
    return up;
  };
  // one call at a time: the budget of a call starts when the worker begins it, not while it queues
  let queue: Promise<unknown> = Promise.resolve();
  const callOnce = async (user: unknown, payload: unknown): Promise<{ json: string } | { error: string }> => {
    ready ??= start();
    try {
      await ready;
    } catch (err) {
      ready = undefined;
      return { error: `the sandbox did not start: ${(err as Error).message}` };
    }
    const w = worker!;
    const id = nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve({ error: `InternalError: interrupted (terminated after ${CUSTOM_CLAIMS_TIMEOUT_MS + CUSTOM_CLAIMS_KILL_GRACE_MS} ms)` });
        void w.terminate();
      }, CUSTOM_CLAIMS_TIMEOUT_MS + CUSTOM_CLAIMS_KILL_GRACE_MS);
      pending.set(id, (r) => { clearTimeout(timer); resolve(r); });
      w.postMessage({ id, user: JSON.stringify(user ?? null), payload: JSON.stringify(payload ?? null) });
    });
  };
  return {
    call(user, payload) {
      const next = queue.then(() => callOnce(user, payload));
      queue = next.catch(() => undefined);
      return next;
    },
    async close() {
      const w = worker;
      worker = undefined;
      ready = undefined;
      if (w) await w.terminate();
    },
  };
}

/**
 * Checks the script parses (node:vm compiles it, never runs it) and returns the sandboxed runner.
 * @returns null when no script is configured
 * @throws AppError `invalid_argument` `--custom-access-token-script does not compile: <reason>`
 */
export function compileCustomClaims(source: string | undefined, logger: Logger): CustomClaims | null {
  if (!source || !source.trim()) return null;
  try {
    // parse only: the same check as the flag's validation (libs/config jwt.ts); nothing is executed
    new vm.Script(`(${source}\n)`, { filename: 'custom-access-token-script.js' });
  } catch (err) {
    throw new AppError('invalid_argument', `--custom-access-token-script does not compile: ${(err as Error).message}`);
  }
  const sandbox = sandboxWorker(source);
  const fail = (reason: string): Record<string, unknown> => {
    logger.warn({ reason }, 'custom access token script failed; token issued without custom claims');
    return {};
  };
  const run = async (user: unknown, tokenPayload: unknown): Promise<Record<string, unknown>> => {
    const reply = await sandbox.call(user, tokenPayload);
    if ('error' in reply) return fail(reply.error);
    if (reply.json.length > CUSTOM_CLAIMS_MAX_JSON) return fail(`the claims exceed ${CUSTOM_CLAIMS_MAX_JSON} characters of JSON`);
    let claims: unknown;
    try {
      claims = JSON.parse(reply.json);
    } catch {
      return fail('the script did not return an object');
    }
    if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) return fail('the script did not return an object');
    const out: Record<string, unknown> = {};
    const refused: string[] = [];
    for (const [k, v] of Object.entries(claims)) {
      if (RESERVED_CLAIMS.has(k) || k === '__proto__') refused.push(k);
      else out[k] = v;
    }
    if (refused.length > 0) logger.warn({ refused }, 'custom access token script set reserved claims; they were dropped');
    return out;
  };
  return Object.assign(run, { close: () => sandbox.close() });
}
