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
  };
  return { client, opened, verified, decide(v: mfa.MfaVerdict | Error) { verdict = v; } };
}
