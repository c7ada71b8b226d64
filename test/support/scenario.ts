/**
 * @module test/support/scenario
 * Runs one logical step on all three surfaces and asserts they answer alike (behaviour.md §0.1:
 * REST, GraphQL and gRPC behave identically), plus small helpers for users and cookies.
 */
import { expect } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SURFACES, cookieValue, expectedStatus, normalise, perform, type Call, type Result, type Surface, type Target } from './surfaces.ts';

export const PASSWORD = 'Correct-Horse-9';

/** A fresh lower-case email unlikely to collide across tests. */
export function freshEmail(label: string): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.com`;
}

export type PerSurface<T> = Record<Surface, T>;

/** Builds one value per surface. */
export function perSurface<T>(make: (s: Surface) => T): PerSurface<T> {
  return { rest: make('rest'), graphql: make('graphql'), grpc: make('grpc') };
}

/**
 * Performs `callFor(surface)` on each surface (sequentially: calls have side effects), asserts that the
 * normalised answers are equal (with each surface's own strings in `replace` mapped to placeholders),
 * that REST error statuses follow behaviour.md §0.2 and that GraphQL errors answer HTTP 200.
 * @returns the three raw results
 */
export async function onAllSurfaces(t: Target, callFor: (s: Surface) => Call, replace: (s: Surface) => Record<string, string> = () => ({})): Promise<PerSurface<Result>> {
  const out = {} as PerSurface<Result>;
  for (const s of SURFACES) out[s] = await perform(s, t, callFor(s));
  const rest = normalise(out.rest, replace('rest'));
  expect(normalise(out.graphql, replace('graphql'))).toEqual(rest);
  expect(normalise(out.grpc, replace('grpc'))).toEqual(rest);
  if (!out.rest.ok) expect(out.rest.status).toBe(expectedStatus(out.rest.code));
  if (!out.graphql.ok) expect(out.graphql.status).toBe(200);
  return out;
}

/** Asserts a result is an error with this code and message (and, on REST, the table's status). */
export function expectError(r: Result, code: string, message: string): void {
  expect(r.ok ? { ok: true, body: r.body } : { code: r.code, message: r.message }).toEqual({ code, message });
  if (r.status !== undefined && r.status !== 200) expect(r.status).toBe(expectedStatus(code));
}

/** Asserts success and returns the body. */
export function expectOk(r: Result): Record<string, any> {
  if (!r.ok) throw new Error(`expected success, got ${r.code}: ${r.message}`);
  return r.body;
}

/** `cookie_session=<v>` from a result's Set-Cookie values (fails when absent or cleared). */
export function sessionCookie(r: Result, name = 'cookie_session'): string {
  const v = cookieValue(r.cookies, name);
  if (!v) throw new Error(`no ${name} cookie in ${JSON.stringify(r.cookies)}`);
  return `${name}=${v}`;
}
