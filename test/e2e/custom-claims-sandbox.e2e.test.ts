/**
 * @module test/e2e/custom-claims-sandbox
 * `--custom-access-token-script` in a real sandbox (issue 18 item 6; behaviour.md §2.1 "Custom claims"):
 * through `/v1/login`, a script that loops forever, allocates without end, or reaches for `process`,
 * `require`, `globalThis.constructor` or `fetch` gets nothing: the login answers 200 with tokens
 * without custom claims, one warning is logged, and the next login works. A normal script's claims
 * appear in both the access and the ID token; reserved claims are dropped.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { decodeJwt } from 'jose';
import { startDeployment, type Deployment, type Mode } from '@gatehouse/testing';
import { until } from '../support/until.ts';
import { PASSWORD, post, signup, sleep } from './email-support.ts';

/** Longer than the 250 ms within which a process writes a logged line to stdout (libs/observability). */
const LOG_FLUSH_WAIT_MS = 750;

/** One script for every case: the e-mail's tag (before the first `-`) picks the behaviour. */
const SCRIPT = `function (user, tokenPayload) {
  const tag = user.email.split('-')[0];
  if (tag === 'loop') { while (true) {} }
  if (tag === 'alloc') { const a = []; for (;;) a.push(new Array(1e5).fill(a.length)); }
  if (tag === 'process') return { pid: process.pid };
  if (tag === 'require') return { passwd: require('fs').readFileSync('/etc/passwd', 'utf8') };
  if (tag === 'ctor') return { pid: globalThis.constructor.constructor('return process')().pid };
  if (tag === 'fetch') { fetch('http://127.0.0.1:1/'); return { fetched: true }; }
  return { plan: 'pro', tenant: 't-' + user.id, tt: tokenPayload.token_type, sub: 'evil', roles: ['admin'] };
}`;

/** The claims every access token has without custom claims (behaviour.md §2.1). */
const BASE_ACCESS = ['allowed_roles', 'aud', 'exp', 'iat', 'iss', 'login_method', 'nonce', 'roles', 'scope', 'sub', 'token_type'];
const tagged = (tag: string): string => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

describe.each(['all', 'split'] as Mode[])('custom access token script sandbox (%s)', (mode) => {
  let d: Deployment;
  beforeAll(async () => {
    d = await startDeployment(mode, { flags: [`--custom-access-token-script=${SCRIPT}`] });
  }, 120_000);
  afterAll(async () => { await d?.stop(); });

  const login = (email: string) => post(d.url, '/v1/login', { email, password: PASSWORD });

  it('a normal script\'s claims appear in both the access and the ID token; reserved claims are dropped', async () => {
    const email = tagged('ada');
    expect((await signup(d.url, email)).status).toBe(200);
    const res = await login(email);
    expect(res.status).toBe(200);
    const access = decodeJwt(res.body.access_token as string);
    const id = decodeJwt(res.body.id_token as string);
    const userId = res.body.user.id as string;
    expect(access).toMatchObject({ plan: 'pro', tenant: `t-${userId}`, tt: 'access_token', sub: userId, roles: ['user'] });
    expect(id).toMatchObject({ plan: 'pro', tenant: `t-${userId}`, sub: userId, token_type: 'id_token' });
  });

  it.each(['loop', 'alloc', 'process', 'require', 'ctor', 'fetch'])('a script that reaches "%s" gets nothing; the login and the next one work', async (tag) => {
    const email = tagged(tag);
    expect((await signup(d.url, email)).status).toBe(200); // signup issues tokens too: one warning
    const warnings = (): number => d.output().split('\n').filter((l) => l.includes('"level":"warn"') && l.includes('"msg":"custom access token script failed; token issued without custom claims"')).length;
    await sleep(LOG_FLUSH_WAIT_MS); // the signup's warning has reached the output
    const warned = warnings();
    const started = Date.now();
    const res = await login(email);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    expect(Object.keys(decodeJwt(res.body.access_token as string)).sort()).toEqual(BASE_ACCESS);
    expect(decodeJwt(res.body.id_token as string)).not.toHaveProperty('pid');
    expect(elapsed).toBeLessThan(5_000);
    // the server is unharmed: the next (normal) login gets its claims at once
    const next = tagged('next');
    expect((await signup(d.url, next)).status).toBe(200);
    const after = await login(next);
    expect(after.status).toBe(200);
    expect(decodeJwt(after.body.access_token as string)).toMatchObject({ plan: 'pro' });
    // and the login's failure was logged as one warning (authn's log), once the lines are written
    await until('the login\'s warning', async () => warnings(), (n) => n > warned, 10_000);
    await sleep(LOG_FLUSH_WAIT_MS);
    expect(warnings()).toBe(warned + 1);
  }, 30_000);
});
