/**
 * @module @gatehouse/authn/domain/custom-claims-worker
 * The worker thread that runs `--custom-access-token-script` in QuickJS/WASM (see ./custom-claims.ts).
 * It gets the script once (`workerData.source`) and answers one message per call: `{ id, user, payload }`
 * (JSON text) → `{ id, json }` (the claims as JSON text made inside the sandbox) or `{ id, error }`.
 * Each call runs in a fresh QuickJS context of one runtime with a heap cap, a stack cap and an
 * interrupt handler at the budget; the parent thread terminates this worker when a call overruns
 * the budget anyway (QuickJS checks interrupts between bytecodes, not inside one long native call).
 * Plain TypeScript that Node's type stripping runs as is: no imports besides quickjs-emscripten.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getQuickJS, shouldInterruptAfterDeadline, type QuickJSRuntime } from 'quickjs-emscripten';

interface Init { source: string; timeoutMs: number; memoryBytes: number; stackBytes: number }
interface Call { id: number; user: string; payload: string }

const init = workerData as Init;
const NOT_AN_OBJECT = '__gatehouse_not_an_object__';
const quickjs = await getQuickJS();
let runtime: QuickJSRuntime | undefined;

/** The program: JSON copies in, the intrinsic JSON.stringify (captured first) of the result out. */
const program = (call: Call): string => `(() => {
  const stringify = JSON.stringify, parse = JSON.parse;
  const result = (${init.source}\n)(parse(${JSON.stringify(call.user)}), parse(${JSON.stringify(call.payload)}));
  if (result === null || typeof result !== 'object' || Array.isArray(result) || typeof result.then === 'function') return ${JSON.stringify(NOT_AN_OBJECT)};
  return stringify(result);
})()`;

function run(call: Call): { json: string } | { error: string } {
  runtime ??= quickjs.newRuntime({ memoryLimitBytes: init.memoryBytes, maxStackSizeBytes: init.stackBytes });
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + init.timeoutMs));
  const context = runtime.newContext();
  let out: { json: string } | { error: string };
  try {
    const result = context.evalCode(program(call), 'custom-access-token-script.js');
    if (result.error) {
      const e = context.dump(result.error) as { name?: string; message?: string } | string;
      result.error.dispose();
      out = { error: typeof e === 'string' ? e : `${e?.name ?? 'Error'}: ${e?.message ?? ''}` };
    } else {
      const value: unknown = context.dump(result.value);
      result.value.dispose();
      out = value === NOT_AN_OBJECT || typeof value !== 'string' ? { error: 'the script did not return an object' } : { json: value };
    }
  } finally {
    context.dispose();
  }
  // a runtime that was interrupted or ran out of memory is not trusted with the next call
  if ('error' in out && /interrupted|out of memory/i.test(out.error)) {
    runtime.dispose();
    runtime = undefined;
  }
  return out;
}

parentPort!.on('message', (call: Call) => {
  let out: { json: string } | { error: string };
  try {
    out = run(call);
  } catch (err) {
    runtime = undefined;
    out = { error: (err as Error).message };
  }
  parentPort!.postMessage({ id: call.id, ...out });
});
parentPort!.postMessage({ ready: true });
