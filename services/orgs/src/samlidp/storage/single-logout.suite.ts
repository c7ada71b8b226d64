/**
 * @module orgs/samlidp/storage/single-logout.suite
 * Issue 31: what every {@link SamlIdpStore} keeps for IdP-sent Single Logout (SAML Profiles §4.4), run
 * on SQLite (the unit run) and PostgreSQL and MariaDB (the integration run): one session participant per
 * browser session and SP (the latest assertion's NameID and SessionIndex), taken once, expired rows never
 * returned; a waiting logout taken once, an expired one refused.
 */
import { randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { SamlIdpStore, SessionParticipantRecord } from './ports.ts';

/** Runs the checks on `store` (its org rows need not exist: the tables have no foreign keys). */
export async function checkSingleLogoutStorage(store: SamlIdpStore): Promise<void> {
  const org = randomUUID();
  const session = randomUUID();
  const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
  const row = (spId: string, over: Partial<SessionParticipantRecord> = {}): SessionParticipantRecord => ({
    orgId: org, sessionId: session, spId, nameId: 'ada@example.com', nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    sessionIndex: `_${spId.replace(/-/g, '')}`, issuedAt: 100, expiresAt: 5_000_000_000, ...over,
  });
  await store.participants.record(row(a, { issuedAt: 100 }));
  await store.participants.record(row(b, { issuedAt: 101, sessionIndex: '_first' }));
  // B again in the same session: its row is replaced by the latest assertion's values
  await store.participants.record(row(b, { issuedAt: 102, sessionIndex: '_second', nameId: 'urn:persistent:ada' }));
  // C's row has expired with its session; another session's row stays
  await store.participants.record(row(c, { issuedAt: 103, expiresAt: 150 }));
  await store.participants.record(row(a, { sessionId: 'another-session' }));

  expect(await store.participants.take(randomUUID(), session, 200)).toEqual([]);
  const taken = await store.participants.take(org, session, 200);
  expect(taken).toEqual([row(a, { issuedAt: 100 }), row(b, { issuedAt: 102, sessionIndex: '_second', nameId: 'urn:persistent:ada' })]);
  // taken once: a second logout of the session finds nothing (the expired row went too)
  expect(await store.participants.take(org, session, 200)).toEqual([]);
  expect((await store.participants.take(org, 'another-session', 200)).map((p) => p.spId)).toEqual([a]);

  const data = JSON.stringify({ awaiting: b });
  await store.logouts.put({ requestId: '_req1', orgId: org, data, expiresAt: 500 });
  await store.logouts.put({ requestId: '_req2', orgId: org, data, expiresAt: 300 });
  expect(await store.logouts.take('_unknown', 200)).toBeNull();
  expect(await store.logouts.take('_req1', 200)).toEqual({ requestId: '_req1', orgId: org, data, expiresAt: 500 });
  expect(await store.logouts.take('_req1', 200)).toBeNull();
  // expired: refused, and gone
  expect(await store.logouts.take('_req2', 301)).toBeNull();
  expect(await store.logouts.take('_req2', 200)).toBeNull();
}
