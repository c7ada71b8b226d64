/**
 * @module @gatehouse/orgs/domain/domains
 * Organization domains (behaviour.md §6.2): normalisation (IDNA to ASCII through the WHATWG URL
 * parser's `domainToASCII`, UTS #46), the public-suffix guard (the Public Suffix List through
 * `tldts`, private section included so `github.io` counts), the consumer-mail guard, the DNS TXT
 * challenge (24 h), verification (first verifier wins), the super-admin shortcut, delete, list, and the
 * per-org hourly limits (§10).
 */
import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { parse as parseDomain } from 'tldts';
import { AppError } from '@gatehouse/errors';
import type { DomainAttemptKind, DomainRecord, PageOf, PageWindow } from '../storage/ports.ts';
import type { OrgsDomainDeps, WithEvents } from './deps.ts';
import { isUuid, ORGANIZATION_NOT_FOUND } from './members.ts';

/** A challenge lives 24 h (§6.2). */
export const CHALLENGE_TTL_SECONDS = 24 * 3600;
/** 20 requests and 20 verifications per org per hour (§6.2, §10). */
export const DOMAIN_LIMIT_PER_HOUR = 20;
export const CHALLENGE_PREFIX = '_service-challenge.';
export const CHALLENGE_VALUE_PREFIX = 'service-domain-verification=';

export const INVALID_DOMAIN = 'invalid domain';
export const PUBLIC_SUFFIX = 'cannot verify a public suffix or bare TLD';
export const CONSUMER_DOMAIN = 'cannot verify a shared consumer email domain';
export const VERIFIED_HERE = 'domain is already verified for this organization';
export const VERIFIED_ELSEWHERE = 'domain is already verified by another organization';
export const NO_CHALLENGE = 'no pending verification challenge for this domain; request one first';
export const DNS_UNRESOLVED = 'dns verification failed: could not resolve the challenge TXT record';
export const DNS_MISMATCH = 'dns verification failed: challenge TXT record not found or does not match';
export const DOMAIN_NOT_FOUND = 'org domain not found';
const LIMIT_MESSAGES: Record<DomainAttemptKind, string> = {
  request: 'too many domain requests, please retry later',
  verify: 'too many verification attempts, please retry later',
};

/** The shared consumer mail domains of §6.2. */
export const CONSUMER_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'live.com', 'msn.com', 'yahoo.com', 'ymail.com', 'aol.com',
  'icloud.com', 'me.com', 'mac.com', 'proton.me', 'protonmail.com', 'pm.me', 'gmx.com', 'gmx.net', 'mail.com', 'zoho.com',
  'yandex.com', 'yandex.ru', 'fastmail.com', 'hey.com', 'qq.com', '163.com', '126.com',
]);

/** TXT lookups (RFC 1035 §3.3.14): each record as its character-strings. */
export interface TxtResolver {
  /**
   * @returns the TXT records at `name`; [] when the name has none (NXDOMAIN, NODATA)
   * @throws Error when the lookup fails (timeout, refused, SERVFAIL)
   */
  resolveTxt(name: string): Promise<string[][]>;
}

/**
 * Normalises a domain as §6.2 says: trim, lower-case, strip a leading `@` or `*.` and a trailing `.`,
 * IDNA to ASCII. The result must contain a dot and none of `:// / * : @ ? #` or whitespace.
 * @returns the ASCII domain (`bücher.example` → `xn--bcher-kva.example`)
 * @throws AppError `invalid_argument` `invalid domain`
 */
export function normaliseDomain(input: string): string {
  let d = input.trim().toLowerCase();
  if (d.startsWith('@')) d = d.slice(1);
  else if (d.startsWith('*.')) d = d.slice(2);
  if (d.endsWith('.')) d = d.slice(0, -1);
  const invalid = (): AppError => new AppError('invalid_argument', INVALID_DOMAIN);
  if (d === '' || /[/*:@?#\s]/u.test(d)) throw invalid();
  const ascii = domainToASCII(d);
  if (ascii === '' || !ascii.includes('.') || ascii.length > 253 || /[/*:@?#\s]/u.test(ascii)) throw invalid();
  if (ascii.split('.').some((label) => label === '' || label.length > 63)) throw invalid();
  return ascii;
}

/**
 * Normalises and applies the §6.2 guards.
 * @throws AppError `invalid_argument` `invalid domain` / `cannot verify a public suffix or bare TLD` /
 *   `cannot verify a shared consumer email domain`
 */
export function verifiableDomain(input: string): string {
  const domain = normaliseDomain(input);
  const parsed = parseDomain(domain, { allowPrivateDomains: true });
  if (!parsed.domain || parsed.publicSuffix === domain) throw new AppError('invalid_argument', PUBLIC_SUFFIX);
  if (CONSUMER_MAIL_DOMAINS.has(domain)) throw new AppError('invalid_argument', CONSUMER_DOMAIN);
  return domain;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 §6 base32, lower-case, unpadded. */
function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** A challenge token: 32 random bytes as lower-case unpadded base32 (52 characters, §6.2). */
export function newChallengeToken(): string {
  return base32(randomBytes(32));
}

/** The OrgDomainChallenge of §6.2 for a pending entry. */
export interface DomainChallenge {
  domain: string;
  recordType: 'TXT';
  recordName: string;
  recordValue: string;
  expiresAt: number;
}

const challengeOf = (d: DomainRecord): DomainChallenge => ({
  domain: d.domain, recordType: 'TXT', recordName: `${CHALLENGE_PREFIX}${d.domain}`,
  recordValue: `${CHALLENGE_VALUE_PREFIX}${d.challengeToken ?? ''}`, expiresAt: d.challengeExpiresAt ?? 0,
});

function orgIdOf(orgId: string): string {
  if (!isUuid(orgId)) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  return orgId.toLowerCase();
}

/**
 * Counts one attempt of `kind` for the org, refusing past the hourly limit (§6.2, §10).
 * @throws AppError `resource_exhausted` with `Retry-After`
 */
async function consumeAttempt(deps: OrgsDomainDeps, orgId: string, kind: DomainAttemptKind): Promise<void> {
  const now = deps.now();
  await deps.store.transaction(async (tx) => {
    if ((await tx.attempts.count(orgId, kind, now - 3600 + 1)) >= DOMAIN_LIMIT_PER_HOUR) {
      throw new AppError('resource_exhausted', LIMIT_MESSAGES[kind], { headers: { 'Retry-After': '3600' }, reason: `domain_${kind}_limit` });
    }
    await tx.attempts.record(orgId, kind, now);
  });
}

async function requireOrg(deps: OrgsDomainDeps, orgId: string): Promise<string> {
  const id = orgIdOf(orgId);
  if (!(await deps.store.organizations.get(id))) throw new AppError('not_found', ORGANIZATION_NOT_FOUND);
  return id;
}

/**
 * Opens (or renews) the TXT challenge of a domain for an org (behaviour.md §6.2 `request_org_domain`).
 * @throws AppError `not_found` `organization not found`; the normalisation and guard errors;
 *   `already_exists` (verified here / by another org); `resource_exhausted` (hourly limit)
 */
export async function requestDomain(deps: OrgsDomainDeps, input: { orgId: string; domain: string }, withEvents?: WithEvents<DomainChallenge>): Promise<DomainChallenge> {
  const orgId = await requireOrg(deps, input.orgId);
  const domain = verifiableDomain(input.domain);
  await consumeAttempt(deps, orgId, 'request');
  const now = deps.now();
  return deps.store.transaction(async (tx) => {
    const verified = await tx.domains.verified(domain);
    if (verified) throw new AppError('already_exists', verified.orgId === orgId ? VERIFIED_HERE : VERIFIED_ELSEWHERE);
    const existing = await tx.domains.get(orgId, domain);
    const entry: DomainRecord = {
      orgId, domain, verifiedAt: null, challengeToken: newChallengeToken(), challengeExpiresAt: now + CHALLENGE_TTL_SECONDS,
      createdAt: existing?.createdAt ?? now, updatedAt: now,
    };
    await tx.domains.upsert(entry);
    const challenge = challengeOf(entry);
    withEvents?.(tx, challenge);
    return challenge;
  });
}

/** Whether a TXT record set holds the expected value: a record's strings concatenated (RFC 7208 §3.3 style). */
const holds = (records: string[][], value: string): boolean => records.some((strings) => strings.join('') === value);

/**
 * Verifies a pending domain through its TXT challenge (behaviour.md §6.2 `verify_org_domain`). The
 * first org to verify wins; the others' pending entries for the domain are removed.
 * @throws AppError `not_found` `organization not found`; `invalid_argument` (normalisation);
 *   `failed_precondition` (no challenge, DNS error, no match); `already_exists` (another org won);
 *   `resource_exhausted` (hourly limit)
 */
export async function verifyDomain(
  deps: OrgsDomainDeps & { dns: TxtResolver }, input: { orgId: string; domain: string }, withEvents?: WithEvents<DomainRecord>,
): Promise<DomainRecord> {
  const orgId = await requireOrg(deps, input.orgId);
  const domain = normaliseDomain(input.domain);
  await consumeAttempt(deps, orgId, 'verify');
  await refuseIfVerified(deps, orgId, domain);
  const pending = await deps.store.domains.get(orgId, domain);
  if (!pending || pending.verifiedAt !== null || pending.challengeToken === null || (pending.challengeExpiresAt ?? 0) <= deps.now()) {
    // another org's verification may have removed our pending entry since the check above
    await refuseIfVerified(deps, orgId, domain);
    throw new AppError('failed_precondition', NO_CHALLENGE);
  }
  const challenge = challengeOf(pending);
  let records: string[][];
  try {
    records = await deps.dns.resolveTxt(challenge.recordName);
  } catch (err) {
    throw new AppError('failed_precondition', DNS_UNRESOLVED, { cause: err, reason: 'dns_error' });
  }
  if (!holds(records, challenge.recordValue)) throw new AppError('failed_precondition', DNS_MISMATCH);
  const now = deps.now();
  const outcome = await deps.store.transaction(async (tx) => {
    const current = await tx.domains.get(orgId, domain);
    if (current?.challengeToken !== pending.challengeToken) return 'missing' as const;
    const result = await tx.domains.markVerified(orgId, domain, now);
    if (result === 'verified') withEvents?.(tx, { ...pending, verifiedAt: now, challengeToken: null, challengeExpiresAt: null, updatedAt: now });
    return result;
  });
  if (outcome === 'lost') await lose(deps, orgId, domain, VERIFIED_ELSEWHERE);
  if (outcome === 'missing') {
    await refuseIfVerified(deps, orgId, domain);
    throw new AppError('failed_precondition', NO_CHALLENGE);
  }
  return { ...pending, verifiedAt: now, challengeToken: null, challengeExpiresAt: null, updatedAt: now };
}

/** 409 when the domain is verified already: by this org, or by another (whose win removes our pending entry). */
async function refuseIfVerified(deps: OrgsDomainDeps, orgId: string, domain: string): Promise<void> {
  const verified = await deps.store.domains.verified(domain);
  if (verified) await lose(deps, orgId, domain, verified.orgId === orgId ? VERIFIED_HERE : VERIFIED_ELSEWHERE);
}

/** Another org verified the domain first: this org's pending entry goes (§6.2), then 409. */
async function lose(deps: OrgsDomainDeps, orgId: string, domain: string, message: string): Promise<never> {
  if (message === VERIFIED_ELSEWHERE) {
    await deps.store.transaction(async (tx) => {
      const own = await tx.domains.get(orgId, domain);
      if (own && own.verifiedAt === null) await tx.domains.delete(orgId, domain);
    });
  }
  throw new AppError('already_exists', message);
}

/**
 * Adds a verified domain without DNS (behaviour.md §6.2 `add_verified_org_domain`, super-admin).
 * @throws AppError `not_found` `organization not found`; the normalisation and guard errors;
 *   `already_exists` (verified here / by another org)
 */
export async function addVerifiedDomain(deps: OrgsDomainDeps, input: { orgId: string; domain: string }, withEvents?: WithEvents<DomainRecord>): Promise<DomainRecord> {
  const orgId = await requireOrg(deps, input.orgId);
  const domain = verifiableDomain(input.domain);
  const now = deps.now();
  return deps.store.transaction(async (tx) => {
    const verified = await tx.domains.verified(domain);
    if (verified) throw new AppError('already_exists', verified.orgId === orgId ? VERIFIED_HERE : VERIFIED_ELSEWHERE);
    const existing = await tx.domains.get(orgId, domain);
    await tx.domains.upsert({
      orgId, domain, verifiedAt: null, challengeToken: null, challengeExpiresAt: null, createdAt: existing?.createdAt ?? now, updatedAt: now,
    });
    const outcome = await tx.domains.markVerified(orgId, domain, now);
    if (outcome !== 'verified') throw new AppError('already_exists', VERIFIED_ELSEWHERE);
    const entry: DomainRecord = {
      orgId, domain, verifiedAt: now, challengeToken: null, challengeExpiresAt: null, createdAt: existing?.createdAt ?? now, updatedAt: now,
    };
    withEvents?.(tx, entry);
    return entry;
  });
}

/**
 * Deletes an org's entry (pending or verified), or without `orgId` the verified mapping (behaviour.md
 * §6.2 `delete_org_domain`).
 * @throws AppError `invalid_argument` `invalid domain`; `not_found` `org domain not found`
 */
export async function deleteDomain(deps: OrgsDomainDeps, input: { domain: string; orgId: string | null }, withEvents?: WithEvents<DomainRecord>): Promise<DomainRecord> {
  const domain = normaliseDomain(input.domain);
  const notFound = (): AppError => new AppError('not_found', DOMAIN_NOT_FOUND);
  if (input.orgId !== null && !isUuid(input.orgId)) throw notFound();
  return deps.store.transaction(async (tx) => {
    const entry = input.orgId === null ? await tx.domains.verified(domain) : await tx.domains.get(input.orgId.toLowerCase(), domain);
    if (!entry || !(await tx.domains.delete(entry.orgId, domain))) throw notFound();
    withEvents?.(tx, entry);
    return entry;
  });
}

/**
 * An org's verified entries and unexpired pending ones (behaviour.md §6.2 `org_domains`), newest first.
 * @throws AppError `not_found` `organization not found`
 */
export async function listDomains(deps: OrgsDomainDeps, orgId: string, window: PageWindow): Promise<PageOf<DomainRecord>> {
  const id = await requireOrg(deps, orgId);
  return deps.store.domains.list(id, deps.now(), window);
}

/**
 * The organization a verified domain routes to (for org discovery, §5.2 `is_org_discovery_enabled`,
 * and "continue with your organization"): the domain of an email address or a bare domain.
 * @returns the org id, or null when no org verified it (or the input is not a domain)
 */
export async function orgOfVerifiedDomain(deps: Pick<OrgsDomainDeps, 'store'>, input: string): Promise<string | null> {
  const at = input.lastIndexOf('@');
  let domain: string;
  try {
    domain = normaliseDomain(at >= 0 ? input.slice(at + 1) : input);
  } catch {
    return null;
  }
  return (await deps.store.domains.verified(domain))?.orgId ?? null;
}
