/** Domain normalisation, guards and the discovery lookup (behaviour.md §6.2), on the SQLite store. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openScratchOrgsStore } from '../storage/mikro/scratch.ts';
import type { OrgsStoreHandle } from '../storage/ports.suite.ts';
import { addVerifiedDomain, newChallengeToken, normaliseDomain, orgOfVerifiedDomain, verifiableDomain } from './domains.ts';
import { createOrganization } from './organizations.ts';

describe('normaliseDomain / verifiableDomain (§6.2)', () => {
  it('trims, lower-cases, strips @ / *. / a trailing dot, and maps IDNA to ASCII', () => {
    expect(normaliseDomain('  @Acme.Example. ')).toBe('acme.example');
    expect(normaliseDomain('*.acme.example')).toBe('acme.example');
    expect(normaliseDomain('bücher.example')).toBe('xn--bcher-kva.example');
    expect(normaliseDomain('XN--BCHER-KVA.example')).toBe('xn--bcher-kva.example');
  });

  it('refuses what is not a domain with `invalid domain`', () => {
    for (const bad of ['', 'nodot', 'https://a.example', 'a.example/x', 'a b.example', 'a.example:1', 'u@a.example', 'a?.example', 'a#.example', 'a..example', `${'a'.repeat(64)}.example`]) {
      expect(() => normaliseDomain(bad)).toThrow(expect.objectContaining({ code: 'invalid_argument', message: 'invalid domain' }));
    }
  });

  it('refuses public suffixes (ICANN and private sections) and the consumer mail domains', () => {
    for (const suffix of ['co.uk', 'github.io', 'com.au', 'blogspot.com']) {
      expect(() => verifiableDomain(suffix)).toThrow(expect.objectContaining({ message: 'cannot verify a public suffix or bare TLD' }));
    }
    for (const consumer of ['gmail.com', 'GMX.net', '126.com', 'pm.me']) {
      expect(() => verifiableDomain(consumer)).toThrow(expect.objectContaining({ message: 'cannot verify a shared consumer email domain' }));
    }
    expect(verifiableDomain('acme.co.uk')).toBe('acme.co.uk');
    expect(verifiableDomain('me.github.io')).toBe('me.github.io');
  });

  it('makes 52-character lower-case unpadded base32 challenge tokens', () => {
    const tokens = new Set(Array.from({ length: 20 }, newChallengeToken));
    expect(tokens.size).toBe(20);
    for (const t of tokens) expect(t).toMatch(/^[a-z2-7]{52}$/);
  });
});

describe('orgOfVerifiedDomain (discovery lookup)', () => {
  let h: OrgsStoreHandle;
  beforeAll(async () => { h = await openScratchOrgsStore('sqlite', () => 1_700_000_000); });
  afterAll(async () => { await h?.close(); });

  it('routes a verified domain, or an email address at it, to its organization', async () => {
    const deps = { store: h.store, users: { get: async () => null }, now: () => 1_700_000_000 };
    const org = await createOrganization(deps, { name: `d-${randomUUID()}` });
    await addVerifiedDomain(deps, { orgId: org.id, domain: 'bücher.example' });
    expect(await orgOfVerifiedDomain(deps, 'Anne@Bücher.Example')).toBe(org.id);
    expect(await orgOfVerifiedDomain(deps, 'xn--bcher-kva.example')).toBe(org.id);
    expect(await orgOfVerifiedDomain(deps, 'other.example')).toBeNull();
    expect(await orgOfVerifiedDomain(deps, 'not a domain')).toBeNull();
  });
});
