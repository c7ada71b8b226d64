/** @module @gatehouse/rpc/proto.test A response that is a whole google.protobuf.Struct stays a plain JSON object. */
import { describe, it, expect } from '@jest/globals';
import { serviceDescriptor, servicesWithProto } from './proto.ts';

describe('top-level google.protobuf.Struct responses (GetOpenidConfiguration)', () => {
  const codec = serviceDescriptor('authn').methods.get('GetOpenidConfiguration')!;
  const doc = { issuer: 'https://auth.example.com', scopes_supported: ['openid', 'offline_access'], nested: { a: 1, b: null, c: true } };

  it('normalises to the same plain object (in-process path)', () => {
    expect(codec.normalizeResponse(doc)).toEqual(doc);
  });

  it('survives the protobuf encoding (gRPC path)', () => {
    expect(codec.decodeResponse(codec.encodeResponse(doc))).toEqual(doc);
  });

  it('still shapes ordinary messages', () => {
    const meta = serviceDescriptor('authn').methods.get('Meta')!;
    expect(meta.normalizeResponse({ version: '2.3.0' })).toMatchObject({ version: '2.3.0', is_sign_up_enabled: false });
  });
});

describe('request normalisation (the codec both transports share)', () => {
  const check = serviceDescriptor('authz').methods.get('CheckPermissions')!;

  it('fills absent optional fields with null and drops unknown fields', () => {
    expect(check.normalizeRequest({ checks: [{ relation: 'can_read', object: 'doc:1', extra: 1 }], unknown: true })).toEqual({
      checks: [{ relation: 'can_read', object: 'doc:1', contextual_tuples: [], context: null }],
      user: null,
      context: null,
    });
  });

  it('names the first offending field with its full path, list indexes included', () => {
    expect(() => check.normalizeRequest({ checks: [{ relation: 'a', object: 'doc:1' }, { relation: 7, object: 'doc:2' }] }))
      .toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'invalid value for field "checks[1].relation": expected string' }));
    expect(() => check.normalizeRequest({ checks: [{ relation: 'a', object: 'doc:1', contextual_tuples: [{ user: 'user:1', relation: 'r', object: ['doc:3'] }] }] }))
      .toThrow(expect.objectContaining({ message: 'invalid value for field "checks[0].contextual_tuples[0].object": expected string' }));
  });

  it('refuses a list element that is not an object, a field that is not a list, and a body that is not an object', () => {
    expect(() => check.normalizeRequest({ checks: ['doc:1'] }))
      .toThrow(expect.objectContaining({ message: 'invalid value for field "checks[0]": expected object' }));
    expect(() => check.normalizeRequest({ checks: { relation: 'a' } }))
      .toThrow(expect.objectContaining({ message: 'invalid value for field "checks": expected list of object' }));
    expect(() => check.normalizeRequest([{ relation: 'a' }])).toThrow(expect.objectContaining({ message: 'invalid JSON body' }));
  });

  it('checks each element of a list of strings and of a Struct field', () => {
    const signup = serviceDescriptor('authn').methods.get('Signup')!;
    expect(signup.normalizeRequest({ email: 'a@b.c', roles: ['user'], app_data: { plan: 'pro' } })).toMatchObject({ roles: ['user'], scope: [], app_data: { plan: 'pro' }, password: null });
    expect(() => signup.normalizeRequest({ roles: ['user', 7] }))
      .toThrow(expect.objectContaining({ message: 'invalid value for field "roles[1]": expected list of string' }));
    expect(() => signup.normalizeRequest({ app_data: 'x' }))
      .toThrow(expect.objectContaining({ message: 'malformed app_data' })); // behaviour.md §3.1: 400 `malformed app_data`
    expect(() => signup.normalizeRequest({ is_multi_factor_auth_enabled: 'yes' }))
      .toThrow(expect.objectContaining({ message: 'invalid value for field "is_multi_factor_auth_enabled": expected boolean' }));
  });

  it('accepts digit strings for integer fields and refuses fractions', () => {
    const read = serviceDescriptor('authz').methods.get('ReadTuples')!;
    expect(read.normalizeRequest({ page_size: '25' })).toMatchObject({ page_size: 25 });
    expect(() => read.normalizeRequest({ page_size: 2.5 }))
      .toThrow(expect.objectContaining({ message: 'invalid value for field "page_size": expected integer' }));
  });
});

describe('response shaping (what every transport answers)', () => {
  it('gives every field of nested messages, in order, and drops what the proto does not name', () => {
    const check = serviceDescriptor('authz').methods.get('CheckPermissions')!;
    const out = check.normalizeResponse({ results: [{ relation: 'can_read', object: 'doc:1', allowed: true, debug: 'x' }, { relation: 'writer' }], extra: 1 });
    expect(out).toEqual({ results: [{ relation: 'can_read', object: 'doc:1', allowed: true }, { relation: 'writer', object: '', allowed: false }] });
    expect(JSON.stringify(out)).toBe('{"results":[{"relation":"can_read","object":"doc:1","allowed":true},{"relation":"writer","object":"","allowed":false}]}');
    expect(check.normalizeResponse(undefined)).toEqual({ results: [] });
    expect(check.normalizeResponse({ results: 'nope' })).toEqual({ results: [] });
  });

  it('fills absent fields with null or their default, copies lists, and answers an empty recovery-code list as null', () => {
    const login = serviceDescriptor('authn').methods.get('Login')!;
    const roles = ['user'];
    const out = login.normalizeResponse({ message: 'Logged in successfully', user: { id: 'u1', roles }, authenticator_recovery_codes: [] });
    expect(out).toMatchObject({ message: 'Logged in successfully', access_token: null, should_show_totp_screen: false, authenticator_recovery_codes: null });
    const user = out.user as Record<string, unknown>;
    expect(user).toMatchObject({ id: 'u1', roles: ['user'], email: null });
    expect(user.roles).not.toBe(roles);
    expect(login.normalizeResponse({ message: 'm', authenticator_recovery_codes: ['a-b'] }).authenticator_recovery_codes).toEqual(['a-b']);
    expect(login.normalizeResponse({ message: 'm' }).user).toBeNull();
  });
});

describe('which calls the gateway may send again (idempotency_level)', () => {
  it('marks every GET route as safe to repeat, but the emailed verify_email link, so a read cut by a replica going away is retried (issue 37 §3)', () => {
    const notRepeatable: string[] = [];
    for (const service of servicesWithProto()) {
      const desc = serviceDescriptor(service);
      for (const method of desc.methods.values()) {
        if (method.rest?.method === 'GET' && !method.idempotent) notRepeatable.push(`${method.name} ${method.rest.path}`);
      }
    }
    // verifying an email is a state change carried by a link, not a read
    expect(notRepeatable).toEqual(['VerifyEmailLink /verify_email']);
    expect(serviceDescriptor('admin').methods.get('AdminMeta')).toMatchObject({ idempotent: true, readOnly: true });
  });

  it('marks the reads the notifications worker makes of admin as safe to repeat, so a cut one does not spend a webhook attempt', () => {
    const internal = serviceDescriptor('admin.internal');
    expect([...internal.methods.values()].map((m) => [m.name, m.idempotent])).toEqual([['WebhookTarget', true], ['StoredEmailTemplate', true]]);
  });
});
