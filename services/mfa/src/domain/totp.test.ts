/** TOTP's pieces (behaviour.md §4.5): the secret, sealing, the otpauth URI, the QR image, recovery codes. */
import { describe, expect, it } from '@jest/globals';
import { generate } from 'otplib';
import { user } from '../fixture.ts';
import {
  looksLikeRecoveryCode, matchingStep, newTotpEnrolment, otpauthUri, qrPngBase64, recoveryCodeHash, totpSealKey,
} from './totp.ts';

const T = 1_800_000_010;

describe('TOTP (behaviour.md §4.5)', () => {
  it('a 20-byte secret as 32 unpadded base32 characters, sealed with AES-256-GCM bound to the user', async () => {
    const key = totpSealKey('k'.repeat(32), 'client-secret');
    const e = newTotpEnrolment(key, 'u-ada', 'pending', T);
    expect(e.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(e.record).toMatchObject({ userId: 'u-ada', slot: 'pending', lastStep: null, expiresAt: T + 600 });
    expect(e.record.secretSealed).not.toContain(e.secret);
    const code = await generate({ secret: e.secret, epoch: T });
    expect(await matchingStep(key, e.record, code, T)).toBe(Math.floor(T / 30));
    // another user's row does not open (aad), nor does another key
    await expect(matchingStep(key, { ...e.record, userId: 'u-bob' }, code, T)).rejects.toThrow();
    await expect(matchingStep(totpSealKey('other-key', 'client-secret'), e.record, code, T)).rejects.toThrow();
    expect(await matchingStep(key, e.record, '12345', T)).toBeNull();
    expect(newTotpEnrolment(key, 'u-ada', 'active', T).record.expiresAt).toBeNull();
  });

  it('the otpauth URI of §4.5: issuer, account (email, else phone, else id), SHA1, 6 digits, 30 s', () => {
    expect(otpauthUri('Gatehouse', user('u-ada'), 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'))
      .toBe('otpauth://totp/Gatehouse:u-ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30');
    expect(otpauthUri('Acme Co', user('u-p', { email: null }), 'S')).toBe('otpauth://totp/Acme%20Co:%2B15550100?secret=S&issuer=Acme%20Co&algorithm=SHA1&digits=6&period=30');
    expect(otpauthUri('Acme', user('u-id', { email: null, phone_number: null }), 'S')).toBe('otpauth://totp/Acme:u-id?secret=S&issuer=Acme&algorithm=SHA1&digits=6&period=30');
  });

  it('the QR is a 200×200 PNG in standard base64 without a data: prefix', async () => {
    const b64 = await qrPngBase64('otpauth://totp/Gatehouse:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30');
    expect(b64).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const png = Buffer.from(b64, 'base64');
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([200, 200]);
  });

  it('10 UUIDv4 recovery codes per enrolment, stored as SHA-256 of the lower-case code', () => {
    const e = newTotpEnrolment(totpSealKey(undefined, 'client-secret'), 'u-ada', 'pending', T);
    expect(e.recoveryCodes).toHaveLength(10);
    for (const code of e.recoveryCodes) expect(code).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(e.recoveryRecords.map((r) => r.codeHash)).toEqual(e.recoveryCodes.map(recoveryCodeHash));
    expect(recoveryCodeHash(` ${e.recoveryCodes[0]!.toUpperCase()} `)).toBe(e.recoveryRecords[0]!.codeHash);
    expect(looksLikeRecoveryCode(e.recoveryCodes[0]!)).toBe(true);
    expect(looksLikeRecoveryCode('123456')).toBe(false);
  });
});
