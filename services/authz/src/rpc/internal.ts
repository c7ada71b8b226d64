/**
 * @module authz/rpc/internal
 * AuthzInternal (issue 19): the engine operations another Gatehouse service needs without an admin
 * caller (orgs writes the tuples of SCIM groups, behaviour.md §6.4). The same handlers as the admin
 * RPCs, given deps without the audit hook: these writes are audited by the calling service's own
 * events (`group.*`), not as `admin.fga_*` actions of an administrator.
 */
import { defineService, serviceDescriptor, type HandlerMap } from '@gatehouse/rpc';
import type { AuthzDeps } from './deps.ts';
import { getModel } from './get-model.ts';
import { writeTuples } from './write-tuples.ts';
import { deleteTuples } from './delete-tuples.ts';
import { readTuples } from './read-tuples.ts';

/** The AuthzInternal handler map; errors as the admin RPCs (`failed_precondition` when the engine is off). */
export function createAuthzInternal(deps: AuthzDeps): HandlerMap {
  const quiet: AuthzDeps = { engine: deps.engine, authenticator: deps.authenticator };
  return defineService(serviceDescriptor('authz.internal'), {
    GetModel: getModel(quiet),
    WriteTuples: writeTuples(quiet),
    DeleteTuples: deleteTuples(quiet),
    ReadTuples: readTuples(quiet),
  }).handlers;
}
