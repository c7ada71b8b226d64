import { describe, expect, it } from '@jest/globals';
import { createCallContext } from '@gatehouse/rpc';
import { actorOf, auditRecord, SUPER_ADMIN_ACTOR } from './audit.ts';
import type { UserCaller } from './authenticator.ts';

describe('auditRecord (behaviour.md §5.7)', () => {
  const ctx = createCallContext({ clientIp: '203.0.113.7', protocol: 'graphql', headers: { 'user-agent': 'curl/8' } });

  it('records the caller, the client and the surface, with protocol always in metadata', () => {
    const rec = auditRecord(ctx, 'admin.user_updated', {
      actor: SUPER_ADMIN_ACTOR, resourceType: 'user', resourceId: 'u1', details: { fields: ['email'], protocol: 'forged' }, at: 1700000000,
    });
    expect(rec).toEqual({
      action: 'admin.user_updated', actor_id: undefined, actor_type: 'admin', actor_email: undefined,
      resource_type: 'user', resource_id: 'u1', ip_address: '203.0.113.7', user_agent: 'curl/8',
      metadata: '{"fields":["email"],"protocol":"graphql"}', created_at: 1700000000,
    });
  });

  it('names a user actor by id and email, a super-admin by type only', () => {
    const user = { kind: 'user', userId: 'u9' } as UserCaller;
    expect(actorOf(user, 'ada@example.com')).toEqual({ type: 'user', id: 'u9', email: 'ada@example.com' });
    expect(actorOf({ kind: 'admin', via: 'header' })).toEqual({ type: 'admin', id: null });
    const rec = auditRecord(createCallContext(), 'user.logout', { actor: actorOf(user) });
    expect(JSON.parse(rec.metadata)).toEqual({ protocol: 'grpc' });
    expect(rec.user_agent).toBe('');
  });
});
