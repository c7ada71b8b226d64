import { describe, expect, it } from '@jest/globals';
import { AppError, codeFromGraphql, codeFromGrpcStatus, graphqlCodeOf, httpStatusOf, toAppError } from './index.ts';

describe('error table (behaviour.md §0.2)', () => {
  it.each([
    ['invalid_argument', 400, 3],
    ['failed_precondition', 400, 9],
    ['unauthenticated', 401, 16],
    ['permission_denied', 403, 7],
    ['not_found', 404, 5],
    ['already_exists', 409, 6],
    ['aborted', 409, 10],
    ['resource_exhausted', 429, 8],
    ['cancelled', 499, 1],
    ['unimplemented', 501, 12],
    ['unavailable', 503, 14],
    ['deadline_exceeded', 504, 4],
    ['internal', 500, 13],
  ] as const)('%s maps to HTTP %i and gRPC %i, and the gRPC status maps back', (code, http, grpc) => {
    const err = new AppError(code, 'x');
    expect(err.httpStatus).toBe(http);
    expect(err.grpcStatus).toBe(grpc);
    expect(codeFromGrpcStatus(grpc)).toBe(code);
  });

  it('method_not_allowed is 405', () => {
    expect(httpStatusOf('method_not_allowed')).toBe(405);
  });

  it('GraphQL codes are the REST code upper-cased and map back; unknown codes become internal', () => {
    expect(graphqlCodeOf('resource_exhausted')).toBe('RESOURCE_EXHAUSTED');
    expect(codeFromGraphql('NOT_FOUND')).toBe('not_found');
    expect(codeFromGraphql('DOWNSTREAM_SERVICE_ERROR')).toBe('internal');
  });

  it('the REST body is exactly {code, message}; causes never leak', () => {
    const err = new AppError('not_found', 'webhook not found', { cause: new Error('secret detail'), reason: 'x' });
    expect(JSON.parse(JSON.stringify(err))).toEqual({ code: 'not_found', message: 'webhook not found' });
  });

  it('anything that is not an AppError becomes internal with a generic message', () => {
    const err = toAppError(new TypeError('boom: password=hunter2'));
    expect(err.toJSON()).toEqual({ code: 'internal', message: 'internal error' });
  });
});
