/**
 * @module test/support/readyz
 * A process's `/readyz` answer, and polling until a condition holds: for tests that stop and start
 * dependencies and watch readiness follow.
 */

/** `GET <url>/readyz`: its status and JSON body. */
export async function readyz(url: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: await res.json() as Record<string, any> };
}

/** Calls `probe` every 200 ms until `ok` holds of its value or `ms` pass; returns the last value. */
export async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}
