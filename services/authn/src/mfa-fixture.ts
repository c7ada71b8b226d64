/**
 * @module @gatehouse/authn/mfa-fixture
 * Test helper (used by *.test.ts only): the mfa service's internal API as authn sees it.
 */
import type { mfa } from '@gatehouse/contracts';
import { AppError } from '@gatehouse/errors';
import type { MfaInternalClient } from './rpc/deps.ts';

/**
 * mfa's internal API as authn sees it: records each challenge and sets the cookie mfa would; its
 * verdict on verify_otp is the one the test sets (the real mfa service is exercised end to end by
 * test/e2e/mfa-otp.e2e.test.ts and services/mfa/test).
 */
const unused = async (): Promise<never> => {
  throw new AppError('unimplemented', 'not used by these tests');
};

export function recordingMfa() {
  const opened: Array<Record<string, unknown>> = [];
  const verified: Array<Record<string, unknown>> = [];
  let verdict: mfa.MfaVerdict | Error = new AppError('unauthenticated', 'invalid session');
  const client: MfaInternalClient = {
    async OpenOtpChallenge(req, ctx) {
      opened.push({ ...req });
      ctx.setCookies.push('mfa=handle; Path=/; Max-Age=300; HttpOnly');
      return { expires_at: 0, code_sent: true };
    },
    async VerifyOtpChallenge(req, ctx) {
      verified.push({ ...req });
      if (verdict instanceof Error) throw verdict;
      ctx.setCookies.push('mfa=; Path=/; Max-Age=0; HttpOnly');
      return verdict;
    },
    // the gate lets every user through (G1); the gate itself is tested in services/mfa and e2e
    async EvaluateGate() { return { outcome: 'issue', response: null }; },
    async EnrolledMfaMethods(req) { return { users: req.user_ids.map((id) => ({ user_id: id, methods: [] })) }; },
    SkipMfaSetup: unused, LockMfa: unused, BeginOtpEnrolment: unused, BeginTotpEnrolment: unused, ResetUserMfa: unused,
    VerifyWebauthnRegistration: unused, VerifyWebauthnLogin: unused,
  };
  return { client, opened, verified, decide(v: mfa.MfaVerdict | Error) { verdict = v; } };
}
