/**
 * @module @gatehouse/authn/storage/oauth.suite
 * Conformance suite of {@link OAuthStore} (issue 18), run on memory and on every SQL database: clients
 * and issuers round-trip with their lists and nulls, lists are created_at desc then id with the total,
 * a client's deletion cascades to its issuers, codes and assertion jtis are single use.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from '@jest/globals';
import type { ClientRecord, OAuthStore, TrustedIssuerRecord } from './ports.ts';

export function sampleClient(over: Partial<ClientRecord> = {}): ClientRecord {
  return {
    id: randomUUID(), name: 'svc', description: null, allowedScopes: ['a', 'b'], isActive: true, secretHash: 'hmac-sha256:00',
    redirectUris: ['https://rp.example/cb'], grantTypes: ['client_credentials'], isPublic: false, postLogoutRedirectUris: [],
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
      const a = sampleClient({ createdAt: 1, description: 'first', isPublic: true, secretHash: null });
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

    it('consumes a code once and records the session it opened', async () => {
      const code = { codeHash: 'h'.repeat(64), clientId: 'c', redirectUri: 'https://rp.example/cb', codeChallenge: null, userId: randomUUID(), sessionId: randomUUID(), grant: '{}', expiresAt: 100, consumedAt: null, issuedSessionId: null };
      await s.saveCode(code);
      expect(await s.consumeCode(code.codeHash, 50)).toBe(true);
      expect(await s.consumeCode(code.codeHash, 51)).toBe(false);
      const sid = randomUUID();
      await s.setCodeSession(code.codeHash, sid);
      expect(await s.findCode(code.codeHash)).toEqual({ ...code, consumedAt: 50, issuedSessionId: sid });
    });

    it('accepts an assertion jti once until it expires', async () => {
      expect(await s.useJti('iss|1', 200, 100)).toBe(true);
      expect(await s.useJti('iss|1', 200, 150)).toBe(false);
      expect(await s.useJti('iss|1', 400, 250)).toBe(true);
    });
  });
}
