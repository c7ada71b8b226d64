/**
 * @module @gatehouse/authn/storage/oauth.suite
 * Conformance suite of {@link OAuthStore} (issue 18), run on memory and on every SQL database: clients
 * and issuers round-trip with their lists and nulls, lists are created_at desc then id with the total,
 * a client's deletion cascades to its issuers, codes and assertion jtis are single use; consent grants
 * (issue 34) are one row per id and go with their client, consent requests are single use and expire.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from '@jest/globals';
import type { ClientRecord, OAuthStore, TrustedIssuerRecord } from './ports.ts';

export function sampleClient(over: Partial<ClientRecord> = {}): ClientRecord {
  return {
    id: randomUUID(), name: 'svc', description: null, allowedScopes: ['a', 'b'], isActive: true, secretHash: 'hmac-sha256:00',
    redirectUris: ['https://rp.example/cb'], grantTypes: ['client_credentials'], isPublic: false, postLogoutRedirectUris: [], isFirstParty: false,
    registrationTokenHash: null, registeredIp: null,
    backchannelLogoutUri: null, backchannelLogoutSessionRequired: false, frontchannelLogoutUri: null, frontchannelLogoutSessionRequired: false,
    requirePushedAuthorizationRequests: false,
    createdAt: 1_800_000_000, updatedAt: 1_800_000_000, ...over,
  };
}

function sampleIssuer(serviceAccountId: string, over: Partial<TrustedIssuerRecord> = {}): TrustedIssuerRecord {
  return {
    id: randomUUID(), serviceAccountId, name: 'iss', issuerUrl: `https://${randomUUID()}.example`, keySourceType: 'oidc_discovery', jwksUrl: null,
    expectedAud: 'aud', subjectClaim: 'sub', allowedSubjects: 'a,b', issuerType: 'oidc', isActive: true, spiffeRefreshHintSeconds: null,
    enableTokenReview: false, kubernetesApiServerUrl: null, createdAt: 1_800_000_000, updatedAt: 1_800_000_000, ...over,
  };
}

/** Registers the suite; `make` returns a store over empty tables. */
export function runOAuthStoreSuite(label: string, make: () => Promise<OAuthStore>): void {
  describe(`OAuthStore (${label})`, () => {
    let s: OAuthStore;
    beforeEach(async () => { s = await make(); });

    it('round-trips clients, lists them newest first with the total, updates and deletes with the cascade', async () => {
      const a = sampleClient({ createdAt: 1, description: 'first', isPublic: true, secretHash: null, isFirstParty: true });
      const b = sampleClient({ createdAt: 2 });
      await s.createClient(a);
      await s.createClient(b);
      expect(await s.findClient(a.id)).toEqual(a);
      expect(await s.listClients({ offset: 0, limit: 1 })).toEqual({ rows: [b], total: 2 });
      await s.updateClient({ ...a, isActive: false, allowedScopes: ['c'] });
      expect(await s.findClient(a.id)).toMatchObject({ isActive: false, allowedScopes: ['c'] });
      const t = sampleIssuer(a.id, { jwksUrl: 'https://j.example/jwks', spiffeRefreshHintSeconds: 30 });
      await s.createIssuer(t);
      await s.createIssuer(sampleIssuer(b.id));
      expect(await s.findIssuer(t.id)).toEqual(t);
      expect(await s.findIssuerByUrl(t.issuerUrl)).toEqual(t);
      expect((await s.listIssuers(a.id, { offset: 0, limit: 10 })).total).toBe(1);
      expect((await s.listIssuers(null, { offset: 0, limit: 10 })).total).toBe(2);
      expect(await s.deleteClient(a.id)).toBe(true);
      expect(await s.findIssuer(t.id)).toBeNull();
      expect(await s.deleteClient(a.id)).toBe(false);
    });

    it('finds no client or trusted issuer, and deletes none, for an id of another shape (PostgreSQL\'s uuid columns refuse it)', async () => {
      const a = sampleClient({});
      await s.createClient(a);
      for (const id of ['x', 'a\u0000b', `${a.id}x`, 'https://app.example/client.json', '']) {
        expect([id, await s.findClient(id), await s.findIssuer(id), await s.deleteClient(id), await s.deleteIssuer(id)]).toEqual([id, null, null, false, false]);
      }
      expect(await s.findClient(a.id)).toEqual(a);
    });

    it('consumes a code once and records the session it opened', async () => {
      const code = { codeHash: 'h'.repeat(64), clientId: 'c', redirectUri: 'https://rp.example/cb', codeChallenge: null, userId: randomUUID(), sessionId: randomUUID(), grant: '{}', expiresAt: 100, consumedAt: null, issuedSessionId: null };
      await s.saveCode(code);
      expect(await s.consumeCode(code.codeHash, 50)).toBe(true);
      expect(await s.consumeCode(code.codeHash, 51)).toBe(false);
      const sid = randomUUID();
      await s.setCodeSession(code.codeHash, sid);
      expect(await s.findCode(code.codeHash)).toEqual({ ...code, consumedAt: 50, issuedSessionId: sid });
    });

    it('counts the clients registered through /oauth/register, since a time and from an address (issue 34)', async () => {
      await s.createClient(sampleClient());
      await s.createClient(sampleClient({ registrationTokenHash: 'hmac-sha256:01', registeredIp: '203.0.113.1', createdAt: 100 }));
      await s.createClient(sampleClient({ registrationTokenHash: 'hmac-sha256:02', registeredIp: '203.0.113.1', createdAt: 200 }));
      const other = sampleClient({ registrationTokenHash: 'hmac-sha256:03', registeredIp: '2001:db8::1', createdAt: 300 });
      await s.createClient(other);
      expect(await s.findClient(other.id)).toEqual(other);
      expect(await s.countRegisteredClients(null, null)).toBe(3);
      expect(await s.countRegisteredClients(150, null)).toBe(2);
      expect(await s.countRegisteredClients(null, '203.0.113.1')).toBe(2);
      expect(await s.countRegisteredClients(150, '203.0.113.1')).toBe(1);
    });

    it('keeps one consent grant per id, lists a user\'s newest first, and drops a client\'s grants with it (issue 34)', async () => {
      const client = sampleClient();
      await s.createClient(client);
      const user = randomUUID();
      const g1 = { id: randomUUID(), userId: user, clientId: client.id, scope: ['email', 'openid'], createdAt: 10, updatedAt: 10 };
      const g2 = { id: randomUUID(), userId: user, clientId: 'other', scope: ['openid'], createdAt: 20, updatedAt: 20 };
      expect(await s.saveConsentGrant(g1)).toEqual(g1);
      await s.saveConsentGrant(g2);
      // saving the same id again refreshes updatedAt only
      expect(await s.saveConsentGrant({ ...g1, scope: ['x'], createdAt: 30, updatedAt: 30 })).toEqual({ ...g1, updatedAt: 30 });
      expect(await s.listConsentGrants(user, null, { offset: 0, limit: 10 })).toEqual({ rows: [g2, { ...g1, updatedAt: 30 }], total: 2 });
      expect((await s.listConsentGrants(user, client.id, { offset: 0, limit: 10 })).rows.map((g) => g.id)).toEqual([g1.id]);
      expect((await s.listConsentGrants(randomUUID(), null, { offset: 0, limit: 10 })).total).toBe(0);
      expect(await s.findConsentGrant(g2.id)).toEqual(g2);
      expect(await s.deleteConsentGrant(g2.id)).toBe(true);
      expect(await s.deleteConsentGrant(g2.id)).toBe(false);
      await s.deleteClient(client.id);
      expect(await s.findConsentGrant(g1.id)).toBeNull();
    });

    it('answers a consent request once, and never after it expired (issue 34)', async () => {
      const r = { ticketHash: 'c'.repeat(64), sessionId: randomUUID(), userId: randomUUID(), clientId: 'c', params: '{"a":"b"}', expiresAt: 100, consumedAt: null };
      await s.saveConsentRequest(r);
      await s.saveConsentRequest({ ...r, ticketHash: 'd'.repeat(64) });
      expect(await s.consumeConsentRequest(r.ticketHash, 50)).toEqual({ ...r, consumedAt: 50 });
      expect(await s.consumeConsentRequest(r.ticketHash, 51)).toBeNull();
      expect(await s.consumeConsentRequest('d'.repeat(64), 100)).toBeNull();
      expect(await s.consumeConsentRequest('e'.repeat(64), 1)).toBeNull();
    });

    it('keeps a device authorization: found by user code while unexpired, answered once, polls compare-and-set, redeemed once (issue 34 §5)', async () => {
      const d = {
        deviceCodeHash: 'a'.repeat(64), userCodeHash: 'b'.repeat(64), clientId: 'c', scope: ['openid', 'email'], status: 'pending' as const,
        userId: null, grant: null, interval: 5, lastPolledAt: null, expiresAt: 100, consumedAt: null,
      };
      await s.saveDeviceAuthorization(d);
      expect(await s.findDeviceAuthorization(d.deviceCodeHash)).toEqual(d);
      expect(await s.findDeviceAuthorizationByUserCode(d.userCodeHash, 99)).toEqual(d);
      expect(await s.findDeviceAuthorizationByUserCode(d.userCodeHash, 100)).toBeNull();
      expect(await s.findDeviceAuthorizationByUserCode('f'.repeat(64), 1)).toBeNull();
      expect(await s.consumeDeviceAuthorization(d.deviceCodeHash, 10)).toBe(false);
      expect(await s.recordDevicePoll(d.deviceCodeHash, null, 10, 5)).toBe(true);
      expect(await s.recordDevicePoll(d.deviceCodeHash, null, 11, 10)).toBe(false);
      expect(await s.recordDevicePoll(d.deviceCodeHash, 10, 12, 10)).toBe(true);
      const userId = randomUUID();
      expect(await s.answerDeviceAuthorization(d.deviceCodeHash, { status: 'approved', userId, grant: '{"x":1}' }, 100)).toBe(false);
      expect(await s.answerDeviceAuthorization(d.deviceCodeHash, { status: 'approved', userId, grant: '{"x":1}' }, 20)).toBe(true);
      expect(await s.answerDeviceAuthorization(d.deviceCodeHash, { status: 'denied', userId, grant: null }, 21)).toBe(false);
      expect(await s.findDeviceAuthorization(d.deviceCodeHash)).toEqual({ ...d, status: 'approved', userId, grant: '{"x":1}', lastPolledAt: 12, interval: 10 });
      expect(await s.consumeDeviceAuthorization(d.deviceCodeHash, 30)).toBe(true);
      expect(await s.consumeDeviceAuthorization(d.deviceCodeHash, 31)).toBe(false);
      expect((await s.findDeviceAuthorization(d.deviceCodeHash))?.consumedAt).toBe(30);
    });

    it('accepts an assertion jti once until it expires', async () => {
      expect(await s.useJti('iss|1', 200, 100)).toBe(true);
      expect(await s.useJti('iss|1', 200, 150)).toBe(false);
      expect(await s.useJti('iss|1', 400, 250)).toBe(true);
    });
  });
}
