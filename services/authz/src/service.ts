/**
 * @module authz/service
 * createAuthzService: the authz RPC handler map (spec §4 check_permissions, list_permissions,
 * /v1/admin/fga/*; behaviour.md §7), one handler per RPC of `gatehouse.authz.v1.AuthzService`, each
 * in rpc/<method>.ts. The map only: who may call is each RPC's auth class (proto), enforced by the guard
 * before any handler; rpc/subject.ts pins the subject; the logic is in domain/.
 */
import { createAuthGuard } from '@gatehouse/auth';
import { defineService, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import type { AuthzDeps } from './rpc/deps.ts';
import { checkPermissions } from './rpc/check-permissions.ts';
import { listPermissions } from './rpc/list-permissions.ts';
import { getModel } from './rpc/get-model.ts';
import { readModels } from './rpc/read-models.ts';
import { writeModel } from './rpc/write-model.ts';
import { writeTuples } from './rpc/write-tuples.ts';
import { deleteTuples } from './rpc/delete-tuples.ts';
import { readTuples } from './rpc/read-tuples.ts';
import { listUsers } from './rpc/list-users.ts';
import { expand } from './rpc/expand.ts';
import { reset } from './rpc/reset.ts';
import { deleteUserTuples } from './rpc/delete-user-tuples.ts';

export type { AuthzDeps } from './rpc/deps.ts';

/** Builds the handler map (proto method name → handler), checked against the proto by `defineService`. */
export function createAuthzService(deps: AuthzDeps): { handlers: HandlerMap } {
  const { handlers } = defineService(serviceDescriptor('authz'), {
    CheckPermissions: checkPermissions(deps),
    ListPermissions: listPermissions(deps),
    GetModel: getModel(deps),
    ReadModels: readModels(deps),
    WriteModel: writeModel(deps),
    WriteTuples: writeTuples(deps),
    DeleteTuples: deleteTuples(deps),
    ReadTuples: readTuples(deps),
    ListUsers: listUsers(deps),
    Expand: expand(deps),
    Reset: reset(deps),
    DeleteUserTuples: deleteUserTuples(deps),
  }, createAuthGuard(deps.authenticator));
  return { handlers };
}
