/**
 * @module @gatehouse/observability/memory
 * Gives back to the system the memory V8 keeps after a burst of allocation (issue 22 §3). Start-up
 * (module loading, schema building) and the authz snapshot load allocate hundreds of MiB of short-lived
 * objects: V8 grows its young generation to the largest size allowed and its old generation past what
 * stays live, and then keeps the pages committed. On a quiet process nothing makes V8 shrink them again
 * (a regular full collection does not): measured on `gatehouse all` on PostgreSQL, 200 MiB idle and
 * 340 MiB with 200,000 tuples loaded, of which ≈ 60 and ≈ 160 MiB were committed but unused heap.
 *
 * {@link scheduleMemoryRelease} runs one memory-reducing collection (V8's "last resort" one, as on a
 * low-memory notification: the young generation shrunk to its minimum, free pages unmapped) once the
 * calls stop coming: 50–200 ms of main-thread time, once per burst, not per request.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

type GcFunction = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** V8's gc() in a context of its own (never on the main context's global), or null when unavailable. */
let gcFunction: GcFunction | null | undefined;

function memoryReducingGc(): GcFunction | null {
  if (gcFunction !== undefined) return gcFunction;
  // V8 adds the gc extension to contexts created while --expose-gc is set; the flag is set only for the
  // one context made here (the pattern Jest's --logHeapUsage uses) and cleared again at once
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('typeof gc === "function" ? gc : null');
    gcFunction = typeof gc === 'function' ? gc as GcFunction : null;
  } catch {
    gcFunction = null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return gcFunction;
}

/**
 * Runs the memory-reducing collection now (synchronously).
 * @returns false when this V8 offers no such collection (nothing was done)
 */
export function releaseUnusedMemory(): boolean {
  const gc = memoryReducingGc();
  if (!gc) return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}

let pending: NodeJS.Timeout | undefined;

/**
 * Runs {@link releaseUnusedMemory} `delayMs` after the last call: the end of start-up and the end of a
 * large load each call it, and calls close together make one collection. The timer never keeps the
 * process alive.
 * @param delayMs quiet time before the collection, in milliseconds
 */
export function scheduleMemoryRelease(delayMs = 250): void {
  clearTimeout(pending);
  pending = setTimeout(() => {
    pending = undefined;
    releaseUnusedMemory();
  }, delayMs);
  pending.unref();
}
