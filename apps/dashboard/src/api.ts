/**
 * @module dashboard/api
 * The console's only way to the server: the public `/v1/admin` REST routes, typed from the contract.
 * `ADMIN_OPERATIONS` and `AdminOperations` are generated from the proto RPCs that declare a
 * `/v1/admin` route (libs/contracts/src/gen/admin-operations.ts, `npm run generate`), so a request
 * or response field the contract does not have is a type error here. Calls are same-origin `fetch`
 * with the browser's cookies (the `service-admin` session cookie of `POST /v1/admin/login`, HttpOnly);
 * a POST carries the `Origin` header the gateway's CSRF check wants.
 */
import { ADMIN_OPERATIONS, type AdminOperation, type AdminOperations } from '@gatehouse/contracts/admin-operations';
import { ApiError, fetchJson } from '../../login/src/api.ts';

export { ApiError };

export type { AdminOperation, AdminOperations };
/** The request body of operation `O`. */
export type Req<O extends AdminOperation> = AdminOperations[O]['request'];
/** The response body of operation `O`. */
export type Res<O extends AdminOperation> = AdminOperations[O]['response'];

/** A typed client of `<basePath>/v1/admin`. */
export interface Api {
  /**
   * Calls one operation: GET operations send no body, POST operations send `body` as JSON.
   * @returns the JSON answer
   * @throws ApiError with the server's `{code, message}` (status 401 `unauthenticated`: no valid session)
   */
  call<O extends AdminOperation>(op: O, body: Req<O>): Promise<Res<O>>;
}

/**
 * @param basePath the path prefix of `--url`, `''` for none
 * @param onUnauthenticated called on every 401 answer except the sign-in's own (the session expired or was ended)
 */
export function createApi(basePath: string, onUnauthenticated: () => void): Api {
  return {
    async call(op, body) {
      const { method, path } = ADMIN_OPERATIONS[op];
      try {
        return await fetchJson<Res<typeof op>>(`${basePath}${path}`, method, body);
      } catch (err) {
        if (err instanceof ApiError && err.status === 401 && op !== 'login') onUnauthenticated();
        throw err;
      }
    },
  };
}
