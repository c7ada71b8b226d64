/**
 * Delegated tokens (issue 34 §3): the `act` claim read from a verified token (RFC 8693 §4.1), the scope
 * rule the guard applies to mutating RPCs, and the audit rows of a delegated call naming the agent.
 */
import { describe, expect, it } from '@jest/globals';
import { createJwtSigner, sha256Hex } from '@gatehouse/crypto';
import { createCallContext, serviceDescriptor, type CallContext } from '@gatehouse/rpc';
import { auditRecord } from './audit.ts';
import { createAuthenticator } from './authenticator.ts';
import { DELEGATED_WRITE_SCOPE, delegationOfCall, delegationOfClaims, operationName, requireDelegatedScope } from './delegation.ts';
import { createAuthGuard } from './guard.ts';
import { createMemorySessionStore } from './session-store.ts';

const ISS = 'https://auth.example.com';
const now = 2_000_000;
const clock = (): number => now;
const jwt = createJwtSigner({ type: 'HS256', secret: 'test-secret-test-secret-test-secret' });
const ACT = { sub: 'service_account:agent-1', client_id: 'agent-1', act: { sub: 'service_account:agent-0' } };

/** An authenticator with user u1's session, and bearer headers: plain, delegated, delegated with extra scopes. */
async function setup() {
  const sessions = createMemorySessionStore({ clock });
  await sessions.create({ id: 's1', userId: 'u1', handleHash: sha256Hex('handle-1'), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], authTime: now, expiresAt: now + 3600, createdAt: now });
  const token = (extra: Record<string, unknown>) => jwt.sign({ iss: ISS, sub: 'u1', nonce: 's1', token_type: 'access_token', roles: ['user'], scope: ['openid'], ...extra }, { expiresInSeconds: 600, nowSeconds: now });
  const authenticator = createAuthenticator({ jwt, sessions, issuer: ISS, adminSecret: 'the-admin-secret', disableAdminHeaderAuth: false, clientId: 'cid', clock });
  const bearer = async (extra: Record<string, unknown>): Promise<CallContext> => createCallContext({ headers: { authorization: `Bearer ${await token(extra)}` } });
  return { authenticator, bearer };
}

const authn = serviceDescriptor('authn');
const callOf = (rpc: string) => ({ rpc, request: {}, readOnly: authn.methods.get(rpc)!.readOnly });

describe('delegationOfClaims (RFC 8693 §4.1)', () => {
  it('names the current actor (top-level act.sub), its client id and the whole chain; none without act', () => {
    expect(delegationOfClaims({ sub: 'u1', act: ACT })).toEqual({ userId: 'u1', clientId: 'agent-1', agent: 'service_account:agent-1', chain: ['service_account:agent-1', 'service_account:agent-0'] });
    expect(delegationOfClaims({ sub: 'u1' })).toBeNull();
    expect(delegationOfClaims({ sub: 'u1', act: { client_id: 'x' } })).toBeNull();
    expect(delegationOfClaims({ sub: 'u1', act: 'service_account:x' })).toBeNull();
  });
});

describe('the scope rule of delegated tokens', () => {
  const d = delegationOfClaims({ sub: 'u1', act: ACT });

  it('derives read and write from the protos: profile only reads, update_profile and session mutate', () => {
    expect(['Profile', 'WebauthnCredentials', 'ConsentGrants'].map((r) => [r, authn.methods.get(r)?.readOnly ?? serviceDescriptor('mfa').methods.get(r)?.readOnly]))
      .toEqual([['Profile', true], ['WebauthnCredentials', true], ['ConsentGrants', true]]);
    expect(['UpdateProfile', 'Session', 'Logout', 'DeactivateAccount', 'TotpMfaSetup'].map((r) => authn.methods.get(r)!.readOnly)).toEqual([false, false, false, false, false]);
    expect(serviceDescriptor('authz').methods.get('CheckPermissions')!.readOnly).toBe(true);
    expect(operationName('UpdateProfile')).toBe('update_profile');
    expect(operationName('WebauthnDeleteCredential')).toBe('webauthn_delete_credential');
  });

  it('lets a delegated token read; refuses a mutating call with 403 unless gatehouse:write or gatehouse:<operation> is granted', () => {
    expect(() => requireDelegatedScope(d, ['openid'], callOf('Profile'))).not.toThrow();
    expect(() => requireDelegatedScope(d, ['openid'], callOf('UpdateProfile'))).toThrow(expect.objectContaining({
      code: 'permission_denied', message: 'a delegated token may not call update_profile without the gatehouse:write or gatehouse:update_profile scope',
    }));
    expect(() => requireDelegatedScope(d, ['openid', DELEGATED_WRITE_SCOPE], callOf('UpdateProfile'))).not.toThrow();
    expect(() => requireDelegatedScope(d, ['openid', 'gatehouse:update_profile'], callOf('UpdateProfile'))).not.toThrow();
    expect(() => requireDelegatedScope(d, ['openid', 'gatehouse:update_profile'], callOf('Logout'))).toThrow(expect.objectContaining({ code: 'permission_denied' }));
    // a call of unknown kind counts as mutating; a token without act is never held to the rule
    expect(() => requireDelegatedScope(d, ['openid'], undefined)).toThrow(expect.objectContaining({ code: 'permission_denied' }));
    expect(() => requireDelegatedScope(null, ['openid'], callOf('UpdateProfile'))).not.toThrow();
  });

  it('is applied by the guard to user, user_or_mfa and permissions RPCs; plain user tokens pass as before', async () => {
    const { authenticator, bearer } = await setup();
    const guard = createAuthGuard(authenticator);
    const outcome = (p: Promise<unknown>) => p.then(() => 'passes', (e: { code?: string }) => e.code);
    expect(await outcome(guard('user', await bearer({}), callOf('UpdateProfile')))).toBe('passes');
    expect(await outcome(guard('user', await bearer({ act: ACT }), callOf('Profile')))).toBe('passes');
    expect(await outcome(guard('user', await bearer({ act: ACT }), callOf('UpdateProfile')))).toBe('permission_denied');
    expect(await outcome(guard('user_or_mfa', await bearer({ act: ACT }), callOf('TotpMfaSetup')))).toBe('permission_denied');
    expect(await outcome(guard('user', await bearer({ act: ACT, scope: ['openid', 'gatehouse:write'] }), callOf('UpdateProfile')))).toBe('passes');
    expect(await outcome(guard('permissions', await bearer({ act: ACT }), { rpc: 'CheckPermissions', request: {}, readOnly: true }))).toBe('passes');
  });
});

describe('audit rows of a delegated call', () => {
  it('name the agent as actor (service_account, its client id) and the user and the act chain in metadata', async () => {
    const { authenticator, bearer } = await setup();
    const ctx = await bearer({ act: ACT, scope: ['openid', 'gatehouse:write'] });
    await authenticator.requireUser(ctx);
    expect(delegationOfCall(ctx)).toMatchObject({ userId: 'u1', clientId: 'agent-1' });
    const rec = auditRecord(ctx, 'user.profile_updated', { actor: { type: 'user', id: 'u1', email: 'ada@example.com' }, resourceType: 'user', resourceId: 'u1', details: { changed_fields: ['given_name'] } });
    expect({ ...rec, metadata: JSON.parse(rec.metadata) as unknown }).toMatchObject({
      action: 'user.profile_updated', actor_type: 'service_account', actor_id: 'agent-1', actor_email: undefined, resource_type: 'user', resource_id: 'u1',
      metadata: { changed_fields: ['given_name'], user_id: 'u1', user_email: 'ada@example.com', act: ['service_account:agent-1', 'service_account:agent-0'], protocol: 'grpc' },
    });
    // another actor of the same call (a super-admin, another user) is recorded as it is
    expect(auditRecord(ctx, 'x', { actor: { type: 'user', id: 'u2' } })).toMatchObject({ actor_type: 'user', actor_id: 'u2' });
    // a call with a plain token records the user
    const plain = await bearer({});
    await authenticator.requireUser(plain);
    expect(auditRecord(plain, 'user.logout', { actor: { type: 'user', id: 'u1' } })).toMatchObject({ actor_type: 'user', actor_id: 'u1' });
  });
});
