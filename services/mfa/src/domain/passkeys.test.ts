/**
 * The passkey domain without an authenticator (behaviour.md §4.3, §4.6): the relying party from the
 * flags, the creation and request options, challenges (bound, single use, 300 s), the limits, the
 * list and delete with their audit events, and every refusal that needs no signature. Real
 * ceremonies (attestation, assertion, sign count) run in Chromium: test/e2e/passkeys.e2e.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { makeMfa, T0, user } from '../fixture.ts';
import type { PasskeyRecord } from '../storage/ports.ts';
import { evaluateGate } from './gate.ts';
import { requireMfaSession } from './mfa-session.ts';
import { loginOptions, verifyLogin } from './passkey-login.ts';
import { passkeyName, registrationOptions, verifyRegistration, type Registrant } from './passkey-registration.ts';
import { deletePasskey, listPasskeys, MAX_PASSKEYS_PER_USER, parseCredential, relyingParty, type Auditor } from './passkeys.ts';

const audit: Auditor = (action, d) => ({ action, actor_id: d.actor.id, resource_id: d.resourceId, metadata: JSON.stringify(d.details) });
const ada: Registrant = { kind: 'user', userId: 'u-ada', userName: 'ada@example.com' };

const passkey = (userId: string, over: Partial<PasskeyRecord> = {}): PasskeyRecord => ({
  id: randomUUID(), userId, credentialId: randomBytes(16).toString('base64url'), publicKey: 'pk', signCount: 0, transports: ['internal'],
  name: 'Passkey', aaguid: '00000000-0000-0000-0000-000000000000', deviceType: 'singleDevice', backedUp: false,
  createdAt: T0, updatedAt: T0, lastUsedAt: null, ...over,
});

/** a credential JSON naming `challenge` in its client data, with no valid attestation or signature */
const credentialFor = (challenge: string, id = 'cred-1'): string => JSON.stringify({
  id, rawId: id, type: 'public-key',
  response: { clientDataJSON: Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin: 'https://auth.example.com' })).toString('base64url'), attestationObject: 'AA' },
});

describe('the relying party (behaviour.md §4.6)', () => {
  it('RP ID is the --url host, the name --organization-name; origins are --url plus allowed origins on the RP ID or a subdomain', () => {
    expect(relyingParty({ ...makeMfa().c.options, url: 'https://auth.example.com/base', organizationName: 'Acme',
      allowedOrigins: ['https://app.auth.example.com', 'https://auth.example.com:8443', 'https://example.com', 'https://evil-auth.example.com', '*', 'https://*.auth.example.com'] }))
      .toEqual({ id: 'auth.example.com', name: 'Acme', origins: ['https://auth.example.com', 'https://app.auth.example.com', 'https://auth.example.com:8443'] });
  });
});

describe('registration options (behaviour.md §4.3, §4.6)', () => {
  it('creation options of §4.6, excluding the user\'s passkeys; the challenge is bound to the user', async () => {
    const m = makeMfa();
    const existing = passkey('u-ada', { transports: ['usb'] });
    await m.store.transaction((tx) => tx.passkeys.create(existing));
    const { options, armed } = await registrationOptions(m.c, ada);
    expect(armed).toBeNull();
    const o = JSON.parse(options);
    expect(o).toMatchObject({
      rp: { id: 'auth.example.com', name: 'Gatehouse' }, user: { id: Buffer.from('u-ada').toString('base64url'), name: 'ada@example.com', displayName: 'ada@example.com' },
      pubKeyCredParams: [{ alg: -7, type: 'public-key' }, { alg: -8, type: 'public-key' }, { alg: -257, type: 'public-key' }],
      timeout: 300_000, attestation: 'none', excludeCredentials: [{ id: existing.credentialId, type: 'public-key', transports: ['usb'] }],
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    });
    expect(Buffer.from(o.challenge, 'base64url')).toHaveLength(32);
    // the challenge belongs to ada: bob's registration cannot use it
    const bob: Registrant = { kind: 'user', userId: 'u-bob', userName: 'bob' };
    await expect(verifyRegistration(m.c, bob, { credential: credentialFor(o.challenge), name: null }, audit)).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid passkey registration' });
    // and it was used up by that attempt
    await expect(verifyRegistration(m.c, ada, { credential: credentialFor(o.challenge), name: null }, audit)).rejects.toMatchObject({ message: 'invalid passkey registration' });
  });

  it('10 passkeys per user: the 11th is refused at options', async () => {
    const m = makeMfa();
    await m.store.transaction(async (tx) => {
      for (let i = 0; i < MAX_PASSKEYS_PER_USER; i++) await tx.passkeys.create(passkey('u-ada', { createdAt: T0 + i }));
    });
    await expect(registrationOptions(m.c, ada)).rejects.toMatchObject({ code: 'failed_precondition', message: 'passkey limit reached; delete one before adding another' });
  });

  it('a challenge lives 300 s: after that the registration is refused as expired', async () => {
    const m = makeMfa();
    const o = JSON.parse((await registrationOptions(m.c, ada)).options);
    m.advance(300);
    await expect(verifyRegistration(m.c, ada, { credential: credentialFor(o.challenge), name: 'Key' }, audit)).rejects.toMatchObject({ code: 'invalid_argument', message: 'passkey challenge expired' });
  });

  it('an attestation that does not verify is refused and nothing is stored or recorded', async () => {
    const m = makeMfa();
    const o = JSON.parse((await registrationOptions(m.c, ada)).options);
    await expect(verifyRegistration(m.c, ada, { credential: credentialFor(o.challenge), name: 'Key' }, audit)).rejects.toMatchObject({ message: 'invalid passkey registration' });
    expect(await listPasskeys(m.c, 'u-ada')).toEqual([]);
    expect(m.store.published).toEqual([]);
  });

  it('MFA-session path: needs passkey MFA usable; re-arms the session; refused outside the offer/enrol state', async () => {
    const m = makeMfa({ smtpHost: undefined });
    const offer = await evaluateGate(m.c, { user: user(), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], state: null, authTime: T0 });
    expect(offer.outcome).toBe('offer');
    const session = await requireMfaSession(m.c, offer.armed!.handle, {}, 'login');
    m.advance(100);
    const out = await registrationOptions(m.c, { kind: 'mfa', session }, offer.armed!.handle);
    expect(out.armed).toEqual({ handle: offer.armed!.handle, expiresAt: T0 + 400, armedAt: T0 + 100 });
    expect((await requireMfaSession(m.c, offer.armed!.handle, {}, 'login')).expiresAt).toBe(T0 + 400);
    expect(JSON.parse(out.options).user.name).toBe('u-ada@example.com');

    const off = makeMfa({ disableWebauthnMfa: true });
    await expect(registrationOptions(off.c, { kind: 'mfa', session })).rejects.toMatchObject({ code: 'failed_precondition', message: 'passkey MFA is not available on this server' });

    // a user with a passkey meets G4 (verify): no passkey set-up in that session
    await m.store.transaction((tx) => tx.passkeys.create(passkey('u-ada')));
    const verify = await evaluateGate(m.c, { user: user(), loginMethod: 'basic_auth', roles: ['user'], scope: ['openid'], state: null, authTime: T0 });
    expect(verify.outcome).toBe('verify');
    const vs = await requireMfaSession(m.c, verify.armed!.handle, {}, 'login');
    await expect(verifyRegistration(m.c, { kind: 'mfa', session: vs }, { credential: '{}', name: null }, audit))
      .rejects.toMatchObject({ code: 'failed_precondition', message: 'cannot set up a passkey in the current state' });
  });
});

describe('names and credential JSON (behaviour.md §4.6)', () => {
  it('a name is trimmed, defaults to Passkey, and may have 64 characters', () => {
    expect(passkeyName(undefined)).toBe('Passkey');
    expect(passkeyName('  ')).toBe('Passkey');
    expect(passkeyName(' My key ')).toBe('My key');
    expect(passkeyName('é'.repeat(64))).toBe('é'.repeat(64));
    expect(() => passkeyName('x'.repeat(65))).toThrow('name must be at most 64 characters');
  });

  it('a credential is a PublicKeyCredential JSON of at most 64 KiB whose client data names a challenge', () => {
    const ok = credentialFor('abc');
    expect(parseCredential(ok, 'bad')).toMatchObject({ id: 'cred-1', challenge: 'abc' });
    const over = JSON.stringify({ ...JSON.parse(ok), pad: 'x'.repeat(64 * 1024) });
    for (const bad of [null, '', '{', '[]', '{"id":"x","type":"public-key"}', over, JSON.stringify({ ...JSON.parse(ok), type: 'other' }),
      JSON.stringify({ ...JSON.parse(ok), response: { clientDataJSON: Buffer.from('{}').toString('base64url') } })]) {
      expect(() => parseCredential(bad, 'bad')).toThrow('bad');
    }
  });
});

describe('login options and verify (behaviour.md §4.3)', () => {
  it('usernameless: an empty allowCredentials and user verification required', async () => {
    const m = makeMfa();
    expect(JSON.parse(await loginOptions(m.c, undefined, null))).toMatchObject({ rpId: 'auth.example.com', allowCredentials: [], userVerification: 'required', timeout: 300_000 });
  });

  it('with an email: the caller\'s MFA session must be that account\'s and have a passkey; the challenge is bound to the session', async () => {
    const m = makeMfa();
    const handle = await m.seedSession({ channel: null, contact: null });
    await expect(loginOptions(m.c, undefined, 'u-ada@example.com')).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid session' });
    await expect(loginOptions(m.c, handle, 'u-ada@example.com')).rejects.toMatchObject({ code: 'not_found', message: 'no passkey found for this account' });
    const key = passkey('u-ada');
    await m.store.transaction((tx) => tx.passkeys.create(key));
    const o = JSON.parse(await loginOptions(m.c, handle, 'U-Ada@example.com '));
    expect(o.allowCredentials).toEqual([{ id: key.credentialId, type: 'public-key', transports: ['internal'] }]);
    // without that session's cookie the assertion is refused (the challenge is bound to it)
    const assertion = JSON.stringify({ id: key.credentialId, rawId: key.credentialId, type: 'public-key',
      response: { clientDataJSON: Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: o.challenge })).toString('base64url'), authenticatorData: 'AA', signature: 'AA' } });
    await expect(verifyLogin(m.c, undefined, assertion)).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid passkey' });
    // used up: even with the cookie it is gone
    await expect(verifyLogin(m.c, handle, assertion)).rejects.toMatchObject({ message: 'invalid passkey' });
  });

  it('a malformed assertion is 400; an unknown challenge or credential 401 invalid passkey', async () => {
    const m = makeMfa();
    await expect(verifyLogin(m.c, undefined, '{')).rejects.toMatchObject({ code: 'invalid_argument', message: 'invalid passkey' });
    const o = JSON.parse(await loginOptions(m.c, undefined, null));
    const unknown = JSON.stringify({ id: 'nope', rawId: 'nope', type: 'public-key', response: { clientDataJSON: Buffer.from(JSON.stringify({ challenge: o.challenge })).toString('base64url') } });
    await expect(verifyLogin(m.c, undefined, unknown)).rejects.toMatchObject({ code: 'unauthenticated', message: 'invalid passkey' });
  });
});

describe('list and delete (behaviour.md §4.3, §5.7)', () => {
  it('lists the user\'s own passkeys; deletes one of them with user.webauthn_credential_deleted; another user\'s is 404', async () => {
    const m = makeMfa();
    const mine = passkey('u-ada', { name: 'Laptop', lastUsedAt: T0 + 5 });
    const theirs = passkey('u-bob');
    await m.store.transaction(async (tx) => {
      await tx.passkeys.create(mine);
      await tx.passkeys.create(theirs);
    });
    expect(await listPasskeys(m.c, 'u-ada')).toEqual([{ id: mine.id, name: 'Laptop', transports: ['internal'], createdAt: T0, updatedAt: T0, lastUsedAt: T0 + 5 }]);
    await expect(deletePasskey(m.c, 'u-ada', theirs.id, audit)).rejects.toMatchObject({ code: 'not_found', message: 'passkey not found' });
    await expect(deletePasskey(m.c, 'u-ada', 'not-a-uuid', audit)).rejects.toMatchObject({ code: 'not_found' });
    await expect(deletePasskey(m.c, 'u-ada', ' ', audit)).rejects.toMatchObject({ code: 'invalid_argument', message: 'id is required' });
    expect(m.store.published).toEqual([]);
    await deletePasskey(m.c, 'u-ada', mine.id.toUpperCase(), audit);
    expect(await listPasskeys(m.c, 'u-ada')).toEqual([]);
    expect(m.store.published.map((e) => [e.name, e.data])).toEqual([
      ['audit.recorded', { action: 'user.webauthn_credential_deleted', actor_id: 'u-ada', resource_id: 'u-ada', metadata: JSON.stringify({ passkey_id: mine.id }) }],
    ]);
    expect(await listPasskeys(m.c, 'u-bob')).toHaveLength(1);
  });
});
