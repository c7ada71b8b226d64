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

type Mfa = ProtoServices['gatehouse.mfa.v1.MfaService'];

const handlers: HandlersOf<Mfa> = {
  VerifyOtp: async (req) => ({ message: `verified ${req.otp ?? ''}` }),
  ResendOtp: async () => ({ message: 'sent' }),
};

describe('defineService', () => {
  it('serves the handlers of every RPC of the proto', async () => {
    const impl = defineService(serviceDescriptor('mfa'), handlers);
    const client = typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));
    await expect(client.VerifyOtp({ otp: '123456' }, createCallContext())).resolves.toMatchObject({ message: 'verified 123456' });
  });

  it('does not compile a renamed, missing or mistyped RPC in a handler map', () => {
    // @ts-expect-error VerifyOTP is not an RPC of MfaService (renamed), and VerifyOtp is then missing
    const renamed: HandlersOf<Mfa> = { VerifyOTP: handlers.VerifyOtp, ResendOtp: handlers.ResendOtp };
    // @ts-expect-error ResendOtp is missing
    const missing: HandlersOf<Mfa> = { VerifyOtp: handlers.VerifyOtp };
    const mistyped: HandlersOf<Mfa> = {
      ...handlers,
      // @ts-expect-error `message` is a string in the proto's Response
      ResendOtp: async () => ({ message: 42 }),
    };
    // @ts-expect-error `code` is not a field of VerifyOtpRequest
    const wrongField: HandlersOf<Mfa> = { ...handlers, VerifyOtp: async (req) => ({ message: req.code }) };
    // at run time a descriptor paired with other handlers is refused before anything is served
    expect(() => defineService(serviceDescriptor('mfa'), renamed)).toThrow('MfaService: handlers miss VerifyOtp; are not RPCs: VerifyOTP');
    expect(() => defineService(serviceDescriptor('mfa'), missing)).toThrow('handlers miss ResendOtp');
    expect([mistyped, wrongField]).toHaveLength(2);
  });

  it('answers unimplemented for an RPC listed with notImplemented', async () => {
    const impl = defineService(serviceDescriptor('mfa'), { ...handlers, ResendOtp: notImplemented('resend_otp') });
    const client = typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));
    await expect(client.ResendOtp({}, createCallContext())).rejects.toEqual(new AppError('unimplemented', 'resend_otp is not implemented yet'));
  });
});

describe('typedClient', () => {
  it('does not compile a call to an RPC the peer does not have, or with a mistyped request', async () => {
    const impl = defineService(serviceDescriptor('mfa'), handlers);
    const client = typedClient(impl.desc, createInProcessClient(impl.desc, impl.handlers));
    const ctx = createCallContext();
    // @ts-expect-error ResendOTP is not an RPC of MfaService
    expect(client.ResendOTP).toBeUndefined();
    // @ts-expect-error `otp` is a string
    await expect(client.VerifyOtp({ otp: 123456 }, ctx)).rejects.toMatchObject({ code: 'invalid_argument' });
    const res = await client.ResendOtp({}, ctx);
    // the response is typed: `message` is a string
    expect(res.message.length).toBeGreaterThan(0);
  });
});
