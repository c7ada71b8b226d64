/**
 * @module @gatehouse/errors
 * One error type for every boundary and the one table that maps its code to an HTTP status,
 * a gRPC status and a GraphQL `extensions.code` (behaviour.md §0.2, STYLE §4).
 */

/** Error codes: snake_case gRPC status tokens (spec §7), plus the gateway-only `method_not_allowed`. */
export type ErrorCode =
  | 'invalid_argument'
  | 'failed_precondition'
  | 'out_of_range'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'already_exists'
  | 'aborted'
  | 'resource_exhausted'
  | 'cancelled'
  | 'unimplemented'
  | 'unavailable'
  | 'deadline_exceeded'
  | 'internal'
  | 'method_not_allowed';

interface Mapping {
  readonly http: number;
  /** numeric gRPC status (grpc/status.proto) */
  readonly grpc: number;
}

/** The one table (behaviour.md §0.2). A code cannot reach a caller with two different statuses. */
export const ERROR_TABLE: Readonly<Record<ErrorCode, Mapping>> = Object.freeze({
  cancelled: { http: 499, grpc: 1 },
  invalid_argument: { http: 400, grpc: 3 },
  deadline_exceeded: { http: 504, grpc: 4 },
  not_found: { http: 404, grpc: 5 },
  already_exists: { http: 409, grpc: 6 },
  permission_denied: { http: 403, grpc: 7 },
  resource_exhausted: { http: 429, grpc: 8 },
  failed_precondition: { http: 400, grpc: 9 },
  aborted: { http: 409, grpc: 10 },
  out_of_range: { http: 400, grpc: 11 },
  unimplemented: { http: 501, grpc: 12 },
  internal: { http: 500, grpc: 13 },
  unavailable: { http: 503, grpc: 14 },
  unauthenticated: { http: 401, grpc: 16 },
  // Not a gRPC status: the gateway answers it before any RPC. Carried as UNIMPLEMENTED if it ever crosses gRPC.
  method_not_allowed: { http: 405, grpc: 12 },
});

const GRPC_TO_CODE: ReadonlyMap<number, ErrorCode> = new Map(
  (Object.entries(ERROR_TABLE) as [ErrorCode, Mapping][])
    .filter(([code]) => code !== 'method_not_allowed')
    .map(([code, m]) => [m.grpc, code]),
);

export interface AppErrorOptions {
  /** the underlying error; logged, never sent to the caller */
  cause?: unknown;
  /** a machine-readable reason for logs and gRPC metadata (kratos WithReason), never in the REST body */
  reason?: string;
  /** extra response headers for REST (for example `Retry-After` on resource_exhausted) */
  headers?: Record<string, string>;
}

/** The one error type that crosses every boundary. `message` is safe to show to the caller. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly reason: string | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.reason = options.reason;
    this.headers = options.headers;
  }

  /** HTTP status from the one table. */
  get httpStatus(): number {
    return ERROR_TABLE[this.code].http;
  }

  /** numeric gRPC status from the one table. */
  get grpcStatus(): number {
    return ERROR_TABLE[this.code].grpc;
  }

  /** The REST body: exactly `{code, message}` (spec §7). */
  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** True when `value` is one of the known codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);
}

/** HTTP status for a code (behaviour.md §0.2). */
export function httpStatusOf(code: ErrorCode): number {
  return ERROR_TABLE[code].http;
}

/** The GraphQL `extensions.code`: the REST code upper-cased (graphql.md D2). */
export function graphqlCodeOf(code: ErrorCode): string {
  return code.toUpperCase();
}

/** Inverse of {@link graphqlCodeOf}; unknown codes become `internal`. */
export function codeFromGraphql(extCode: unknown): ErrorCode {
  const lower = typeof extCode === 'string' ? extCode.toLowerCase() : '';
  return isErrorCode(lower) ? lower : 'internal';
}

/** Maps a numeric gRPC status back to a code; unknown and OK (0) become `internal`. */
export function codeFromGrpcStatus(status: number): ErrorCode {
  return GRPC_TO_CODE.get(status) ?? 'internal';
}

/**
 * Normalises anything thrown into an AppError. Anything that is not an AppError becomes
 * `internal` with the generic message `internal error` (behaviour.md §0.2); the original is kept as `cause`.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal', 'internal error', { cause: err });
}

/** Shorthands for the most common refusals. */
export const invalidArgument = (message: string, options?: AppErrorOptions): AppError =>
  new AppError('invalid_argument', message, options);
export const unauthenticated = (message = 'unauthorized', options?: AppErrorOptions): AppError =>
  new AppError('unauthenticated', message, options);
