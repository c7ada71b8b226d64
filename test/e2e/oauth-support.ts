/**
 * @module test/e2e/oauth-support
 * What the OAuth browser suites share: the relying party's redirect URI, a small HTTP server of the
 * test's own on 127.0.0.1 that records every callback URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postJson } from '../support/http.ts';
import { PASSWORD, freshEmail } from '../support/scenario.ts';
import { PASSWORD as EMAIL_FLOWS_PASSWORD, post } from './email-support.ts';

/** The RP's redirect URI: a server on 127.0.0.1 that answers 200 and records every callback URL. */
export async function startRpServer(): Promise<{ callback: string; seen: URL[]; close(): Promise<void> }> {
  const seen: URL[] = [];
  let base = '';
  const server = http.createServer((req, res) => {
    seen.push(new URL(req.url ?? '/', base));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>RP</title><h1>back at the RP</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { callback: `${base}/callback`, seen, close: () => new Promise((resolve) => { server.close(() => resolve()); }) };
}

/**
 * A new user with a browser session at the deployment `url`: signs up and logs in through `/v1`.
 * @returns the `cookie_session=<value>` cookie of POST /v1/login and the user's id
 */
export async function signedInUser(url: string, label: string): Promise<{ cookie: string; userId: string }> {
  const email = freshEmail(label);
  const signup = await postJson(`${url}/v1/signup`, { email, password: PASSWORD, confirm_password: PASSWORD }, { origin: url });
  if (signup.status !== 200) throw new Error(`signup answered ${signup.status}`);
  const login = await postJson(`${url}/v1/login`, { email, password: PASSWORD }, { origin: url });
  const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('cookie_session='))!;
  return { cookie, userId: login.body.user.id };
}

/**
 * A password user of an `mfa: true` deployment who declined MFA at signup, created through /v1 as a test's
 * setup (not the flow under test). Its password is email-support's `PASSWORD`, which the tests that use
 * it type into the login page.
 * @returns the email, the user's id and a first-party access token from `/v1/login`
 * @throws Error when a step is refused
 */
export async function mfaDeclinedUser(base: string, email: string): Promise<{ email: string; id: string; token: string }> {
  const signup = await post(base, '/v1/signup', { email, password: EMAIL_FLOWS_PASSWORD, confirm_password: EMAIL_FLOWS_PASSWORD });
  const skipped = await post(base, '/v1/skip_mfa_setup', {}, { cookie: signup.cookies.map((c) => c.split(';')[0]).join('; ') });
  const login = await post(base, '/v1/login', { email, password: EMAIL_FLOWS_PASSWORD });
  if (skipped.status !== 200 || login.status !== 200) throw new Error(`skip_mfa_setup answered ${skipped.status}, login ${login.status}`);
  return { email, id: login.body.user.id as string, token: login.body.access_token as string };
}
