/**
 * @module authz/service
 * createAuthzService: the authz RPC handlers over the engine (spec §4 check_permissions,
 * list_permissions, /v1/admin/fga/*; behaviour.md §7). Handlers hold no logic beyond who may call:
 * the subject is pinned to the caller (spec §5), admin operations need super-admin credentials, and
 * with the engine off every operation answers `failed_precondition` (spec §1, §7).
 */
import { AppError } from '@gatehouse/errors';
import type { Authenticator } from '@gatehouse/auth';
import { defineService, serviceDescriptor, type CallContext, type HandlerMap } from '@gatehouse/rpc';
import type { authz } from '@gatehouse/contracts';
import { parseSubject, type Engine, type Tuple } from './domain/index.ts';

export interface AuthzDeps {
  /** null when the engine is off (NoSQL main database without --fga-store) */
  engine: Engine | null;
  authenticator: Authenticator;
}

const engineOff = (): AppError => new AppError('failed_precondition', 'authorization engine is not enabled');

/**
 * Resolves the subject of check_permissions / list_permissions (behaviour.md §7.2).
 * @throws AppError `unauthenticated`; `invalid_argument` (super-admin without `user`, malformed user);
 *   `permission_denied` `not authorized to query authorization for another subject`
 */
export async function pinSubject(authenticator: Authenticator, ctx: CallContext, explicit: string | null | undefined): Promise<string> {
  const caller = await authenticator.resolveCaller(ctx);
  const given = explicit === null || explicit === undefined || explicit === '' ? null : parseSubject(explicit);
  if (caller.kind === 'admin') {
    if (!given) throw new AppError('invalid_argument', 'user is required when calling as super-admin');
    return given;
  }
  const own = `user:${caller.userId}`;
  if (given !== null && given !== own) {
    throw new AppError('permission_denied', 'not authorized to query authorization for another subject');
  }
  return own;
}

function toTuples(req: authz.TuplesRequest): Tuple[] {
  return req.tuples.map((t) => ({ user: t.user ?? '', relation: t.relation ?? '', object: t.object ?? '' }));
}

/** Builds the handler map (proto method name → handler). */
export function createAuthzService(deps: AuthzDeps): { handlers: HandlerMap } {
  const { authenticator } = deps;
  const engine = (): Engine => {
    if (!deps.engine) throw engineOff();
    return deps.engine;
  };
  const admin = async (ctx: CallContext): Promise<Engine> => {
    const e = engine();
    await authenticator.requireAdmin(ctx);
    return e;
  };

  const { handlers } = defineService(serviceDescriptor('authz'), {
    async CheckPermissions(req, ctx) {
      const e = engine();
      const subject = await pinSubject(authenticator, ctx, req.user);
      // the codec already shaped each check (absent fields null): the engine validates them as they are
      const results = await e.check(subject, req.checks);
      return { results };
    },
    async ListPermissions(req, ctx) {
      const e = engine();
      const subject = await pinSubject(authenticator, ctx, req.user);
      return e.listPermissions(subject, { relation: req.relation, object_type: req.object_type });
    },
    async GetModel(_req, ctx) {
      return (await admin(ctx)).getModel();
    },
    async WriteModel(req, ctx) {
      return (await admin(ctx)).writeModel(req.dsl ?? '');
    },
    async WriteTuples(req, ctx) {
      await (await admin(ctx)).writeTuples(toTuples(req));
      return { message: 'Tuples written successfully' };
    },
    async DeleteTuples(req, ctx) {
      await (await admin(ctx)).deleteTuples(toTuples(req));
      return { message: 'Tuples deleted successfully' };
    },
    async ReadTuples(req, ctx) {
      return (await admin(ctx)).readTuples({
        user: req.user, relation: req.relation, object: req.object,
        page_size: req.page_size, continuation_token: req.continuation_token,
      });
    },
    async ListUsers(req, ctx) {
      return (await admin(ctx)).listUsers({ object: req.object, relation: req.relation, user_type: req.user_type });
    },
    async Expand(req, ctx) {
      return (await admin(ctx)).expand({ relation: req.relation, object: req.object });
    },
    async Reset(_req, ctx) {
      await (await admin(ctx)).reset();
      return { message: 'Authorization model reset successfully' };
    },
    async DeleteUserTuples(req, ctx) {
      const e = await admin(ctx);
      if (!req.user_id) throw new AppError('invalid_argument', 'user ID is missing');
      return { deleted: await e.deleteUserTuples(req.user_id) };
    },
  });
  return { handlers };
}
