/** @module @gatehouse/admin/rpc/test-endpoint — AdminService.TestEndpoint (POST /v1/admin/test_endpoint, behaviour.md §5.4). */
import { testEndpoint } from '../domain/test-endpoint.ts';
import type { AdminHandler, RpcContext } from './deps.ts';

/** One real, unsigned POST of a synthetic event. @throws AppError as {@link testEndpoint} */
export const testEndpointRpc = (c: RpcContext): AdminHandler<'TestEndpoint'> => async (req) => {
  const { httpStatus, response } = await testEndpoint(c, {
    eventName: req.event_name, endpoint: req.endpoint, eventDescription: req.event_description, headers: req.headers,
  });
  return { http_status: httpStatus, response };
};
