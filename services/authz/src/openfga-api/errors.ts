/**
 * @module authz/openfga-api/errors
 * OpenFGA's own error shape for its HTTP API: a body `{code, message}` whose `code` is one of OpenFGA's
 * error code names (openfga/api `openfga/v1/errors.proto`: `ErrorCode` → 400, `NotFoundErrorCode` → 404,
 * `AuthErrorCode` → 401, `InternalErrorCode` → 500), so an OpenFGA SDK's error handling works unchanged.
 */
import { AppError } from '@gatehouse/errors';

/** One OpenFGA API error: the HTTP status, OpenFGA's code name and a message safe to show the caller. */
export class OpenFgaError extends Error {
  override readonly name = 'OpenFgaError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** A 400 of OpenFGA's `ErrorCode` family (`validation_error`, `invalid_write_input`, …). */
export const invalid = (code: string, message: string): OpenFgaError => new OpenFgaError(400, code, message);

/**
 * The OpenFGA error of what the engine threw, for the operation that called it: `invalid_argument` becomes
 * `defaultCode` (or `authorization_model_resolution_too_complex`, `invalid_continuation_token`), the engine's
 * "no model" becomes `latest_authorization_model_not_found`, `unavailable` a 503, anything else `internal_error`
 * with a generic message (the cause is logged by the listener).
 * @param storeId the store named in `latest_authorization_model_not_found`
 */
export function fromEngineError(err: unknown, defaultCode: string, storeId: string): OpenFgaError {
  if (err instanceof OpenFgaError) return err;
  if (err instanceof AppError) {
    if (err.code === 'invalid_argument') {
      if (err.message === 'resolution too complex') return invalid('authorization_model_resolution_too_complex', 'Authorization Model resolution required too many rewrite rules to be resolved. Try simplifying your authorization model.');
      if (err.message === 'invalid continuation token') return invalid('invalid_continuation_token', 'Invalid continuation token');
      return invalid(defaultCode, err.message);
    }
    if (err.code === 'failed_precondition' && err.message === 'no authorization model is installed') {
      return invalid('latest_authorization_model_not_found', `No authorization models found for store '${storeId}'`);
    }
    if (err.code === 'failed_precondition') return invalid('validation_error', err.message);
    if (err.code === 'unavailable') return new OpenFgaError(503, 'unavailable', err.message);
  }
  return new OpenFgaError(500, 'internal_error', 'Internal Server Error');
}
