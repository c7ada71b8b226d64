/**
 * Handler maps and internal clients are typed by the protos (issue 14 §1): `tsc` (npm run typecheck,
 * run by CI) fails on a renamed, missing or mistyped RPC. Each `@ts-expect-error` below is such a
 * mistake; if it ever compiled, the directive itself would fail the type-check. The runtime checks are
 * the second line of defence for a descriptor paired with the wrong handlers.
 */
import { describe, expect, it } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { createCallContext } from './context.ts';
import { createInProcessClient } from './grpc.ts';
import { serviceDescriptor } from './proto.ts';
import { defineService, notImplemented, typedClient, type HandlersOf } from './typed.ts';
import type { ProtoServices } from '@gatehouse/contracts';

type Mfa = ProtoServices['gatehouse.mfa.v1.MfaInternal'];

const handlers: HandlersOf<Mfa> = {
  OpenOtpChallenge: async (req) => ({ expires_at: req.auth_time + 300, code_sent: true }),
  VerifyOtpChallenge: async (req) => ({ user_id: `user of ${req.otp ?? ''}` }),
  EvaluateGate: notImplemented,
  SkipMfaSetup: notImplemented,
  LockMfa: notImplemented,
  BeginOtpEnrolment: notImplemented,
  BeginTotpEnrolment: notImplemented,
  ResetUserMfa: notImplemented,
  EnrolledMfaMethods: notImplemented,
  VerifyWebauthnRegistration: notImplemented,
  VerifyWebauthnLogin: notImplemented,
};

describe('defineService', () => {
  it('serves the handlers of every RPC of the proto', async () => {
    const impl = defineService(serviceDescriptor('mfa.internal'), handlers);
    const client = typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));
    await expect(client.VerifyOtpChallenge({ otp: '123456' }, createCallContext())).resolves.toMatchObject({ user_id: 'user of 123456', roles: [] });
  });

  it('does not compile a renamed, missing or mistyped RPC in a handler map', () => {
    // @ts-expect-error VerifyOTPChallenge is not an RPC of MfaInternal (renamed), and VerifyOtpChallenge is then missing
    const renamed: HandlersOf<Mfa> = { ...handlers, VerifyOtpChallenge: undefined, VerifyOTPChallenge: handlers.VerifyOtpChallenge };
    // @ts-expect-error OpenOtpChallenge is missing
    const missing: HandlersOf<Mfa> = { ...handlers, OpenOtpChallenge: undefined };
    const mistyped: HandlersOf<Mfa> = {
      ...handlers,
      // @ts-expect-error `code_sent` is a bool in the proto's OpenOtpChallengeResponse
      OpenOtpChallenge: async () => ({ code_sent: 'yes' }),
    };
    // @ts-expect-error `code` is not a field of VerifyOtpChallengeRequest
    const wrongField: HandlersOf<Mfa> = { ...handlers, VerifyOtpChallenge: async (req) => ({ user_id: req.code }) };
    // at run time a descriptor paired with other handlers is refused before anything is served
    expect(() => defineService(serviceDescriptor('mfa.internal'), renamed)).toThrow('MfaInternal: handlers miss VerifyOtpChallenge; are not RPCs: VerifyOTPChallenge');
    expect(() => defineService(serviceDescriptor('mfa.internal'), missing)).toThrow('handlers miss OpenOtpChallenge');
    expect([mistyped, wrongField]).toHaveLength(2);
  });

  it('answers unimplemented for an RPC listed with notImplemented', async () => {
    const impl = defineService(serviceDescriptor('mfa.internal'), { ...handlers, VerifyOtpChallenge: notImplemented });
    const client = typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));
    await expect(client.VerifyOtpChallenge({}, createCallContext())).rejects.toEqual(new AppError('unimplemented', 'mfa.internal.VerifyOtpChallenge is not implemented yet'));
  });
});

describe('typedClient', () => {
  it('does not compile a call to an RPC the peer does not have, or with a mistyped request', async () => {
    const impl = defineService(serviceDescriptor('mfa.internal'), handlers);
    const client = typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));
    const ctx = createCallContext();
    // @ts-expect-error VerifyOTPChallenge is not an RPC of MfaInternal
    expect(client.VerifyOTPChallenge).toBeUndefined();
    // @ts-expect-error `otp` is a string
    await expect(client.VerifyOtpChallenge({ otp: 123456 }, ctx)).rejects.toMatchObject({ code: 'invalid_argument' });
    const res = await client.VerifyOtpChallenge({ otp: 'A' }, ctx);
    // the response is typed: `roles` is a list of strings
    expect(res.roles.length).toBe(0);
  });
});
