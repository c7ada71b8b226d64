/**
 * @module test/support/until
 * Polling for an effect that happens after the answer (a consumer, a relay).
 */

/**
 * Calls `probe` every 250 ms until `done` accepts its value, and returns that value.
 * @param timeoutMs how long to keep trying (default 30 000 ms)
 * @throws Error `timed out waiting for <what>: <last value as JSON>`
 */
export async function until<T>(what: string, probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
