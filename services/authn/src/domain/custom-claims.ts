/**
 * @module @gatehouse/authn/domain/custom-claims
 * `--custom-access-token-script` (behaviour.md §2.1): `function(user, tokenPayload)` returning an
 * object whose non-reserved keys are merged into the access and ID tokens. It runs in a fresh
 * `node:vm` context per call with a 500 ms budget. node:vm isolates globals but is not a security
 * boundary; the script is operator configuration, not user input.
 */
import vm from 'node:vm';
import type { Logger } from '@gatehouse/observability';
import { AppError } from '@gatehouse/errors';

/** Claims a script may never set (behaviour.md §2.1). */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(
  'sub iss aud exp iat nbf jti token_type roles allowed_roles scope nonce login_method auth_time amr acr at_hash c_hash client_id family_id sid act'.split(' '),
);

export const CUSTOM_CLAIMS_TIMEOUT_MS = 500;

export type CustomClaims = (user: unknown, tokenPayload: unknown) => Record<string, unknown>;

/**
 * Compiles the script once.
 * @returns a function that never throws: failures give `{}` and a `warn` log
 * @throws AppError `invalid_argument` `--custom-access-token-script does not compile: <reason>`
 */
export function compileCustomClaims(source: string | undefined, logger: Logger): CustomClaims | null {
  if (!source || !source.trim()) return null;
  let script: vm.Script;
  try {
    script = new vm.Script(`(${source}\n)(JSON.parse(__user), JSON.parse(__payload))`, { filename: 'custom-access-token-script.js' });
  } catch (err) {
    throw new AppError('invalid_argument', `--custom-access-token-script does not compile: ${(err as Error).message}`);
  }
  return (user, tokenPayload) => {
    try {
      const context = vm.createContext({ __user: JSON.stringify(user), __payload: JSON.stringify(tokenPayload) });
      const result: unknown = script.runInContext(context, { timeout: CUSTOM_CLAIMS_TIMEOUT_MS });
      if (result === null || typeof result !== 'object' || Array.isArray(result) || typeof (result as { then?: unknown }).then === 'function') {
        logger.warn({ reason: 'not_an_object' }, 'custom access token script ignored');
        return {};
      }
      const plain = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(plain)) if (!RESERVED_CLAIMS.has(k)) out[k] = v;
      return out;
    } catch (err) {
      logger.warn({ reason: (err as Error).message }, 'custom access token script failed');
      return {};
    }
  };
}
