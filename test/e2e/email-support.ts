/**
 * @module test/e2e/email-support
 * Shared helpers of the email e2e tests: the SMTP flags for a deployment and small REST/GraphQL
 * clients that return status, body and Set-Cookie values.
 */
import type { SmtpSink } from '@gatehouse/testing';

export const PASSWORD = 'Str0ng!pass';
export const NEW_PASSWORD = 'N3w!passw0rd';

/** Flags that point every process at `sink` with verification and magic links on. */
export const emailFlags = (sink: SmtpSink): string[] => [
  `--smtp-host=${sink.host}`, `--smtp-port=${sink.port}`, '--smtp-sender-email=noreply@gatehouse.test',
  '--enable-email-verification', '--enable-magic-link-login', '--skip-tls-verification',
];

export interface Reply {
  status: number;
  body: any;
  cookies: string[];
  headers: Headers;
}

/** POST `path` with a JSON body (Origin = the deployment, for CSRF §2.5). */
export async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, cookies: res.headers.getSetCookie(), headers: res.headers };
}

/** GET `path` without following redirects. */
export async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, body, cookies: res.headers.getSetCookie(), headers: res.headers };
}

/** A `Cookie` header from Set-Cookie values (name=value pairs with a value). */
export function cookieHeader(setCookies: string[]): { cookie: string } {
  return { cookie: setCookies.map((c) => c.split(';')[0]!).filter((c) => !c.endsWith('=')).join('; ') };
}

export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });

/** A fresh address under example.com. */
export const address = (tag: string): string => `${tag}-${Math.random().toString(36).slice(2, 10)}@example.com`;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** POST /v1/signup with the test password. */
export const signup = (base: string, email: string, more: Record<string, unknown> = {}): Promise<Reply> =>
  post(base, '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD, ...more });
