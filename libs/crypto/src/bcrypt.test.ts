import { describe, it, expect } from '@jest/globals';
import { BCRYPT_MAX_COST, verifyBcrypt } from './bcrypt.ts';

// Openwall crypt_blowfish, wrapper.c `tests[]` (Solar Designer), all `$2a$` at cost 5.
const OPENWALL: Array<[string, string]> = [
  ['U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'],
  ['U*U*', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK'],
  ['U*U*U', '$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a'],
  ['', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy'],
];
// The same file's 72-byte vector: the password is exactly 72 ASCII bytes.
const OPENWALL_72 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const OPENWALL_72_HASH = '$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui';

// jBCrypt 0.3 TestBCrypt.java `test_vectors` (Damien Miller, 2006), the cost-6 rows.
const JBCRYPT: Array<[string, string]> = [
  ['', '$2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8jIucDrjc8deX1s.'],
  ['a', '$2a$06$m0CrhHm10qJ3lXRY.5zDGO3rS2KdeeWLuGmsfGlMfOxih58VYVfxe'],
  ['abc', '$2a$06$If6bvum7DFjUnE9p2uDeDu0YHzrHM6tf.iqN8.yx.jNN1ILEf7h0i'],
  ['abcdefghijklmnopqrstuvwxyz', '$2a$06$.rCVZVOThsIa97pEDOxvGuRRgzG64bvtJ0938xuqzv18d3ZpQhstC'],
  ['~!@#$%^&*()      ~!@#$%^&*()PNBFRD', '$2a$06$fPIsBO8qRqkjj273rfaOI.HtSV9jLDpTbZn782DC6/t7qT67P6FfO'],
];

// Produced by glibc/libxcrypt crypt(3) (perl -e 'print crypt($pw, $salt)'), salt `saltsaltsaltsaltsaltsO`
// at cost 5; the prefix is added per test. They cover UTF-8 input and both sides of the 72-byte cut.
const X80 = 'x'.repeat(80);
const Y71 = 'y'.repeat(71);
const LIBXCRYPT: Array<[string, string]> = [
  ['', 'saltsaltsaltsaltsaltsOcZcRHTB1VrcTpZFY7csf4a7tfyWvusG'],
  ['a', 'saltsaltsaltsaltsaltsOAoKFSHL1Nd4Bf9QYurRji8UuhUkrd12'],
  ['Passw0rd!', 'saltsaltsaltsaltsaltsOQA5/rH8YmmswkAwrQ22MNCNUhoOQ1Cy'],
  ['pässwörd✓', 'saltsaltsaltsaltsaltsOO/N.5gyKTzL.Xq5zYRnLF1CCFrtnVYi'],
  [X80, 'saltsaltsaltsaltsaltsOdHbjRgv2wLF4t073uVLWDhg7YCRBcnK'],
  [Y71, 'saltsaltsaltsaltsaltsOUY6U1RChvkbXllbn/RliIbcT0mB.caG'],
];

/** The hash with its `$2?$` prefix replaced. */
const as = (version: string, hash: string): string => `$${version}$${hash.slice(4)}`;

describe('bcrypt verification (legacy hashes, behaviour.md §3.1)', () => {
  it.each(OPENWALL)('verifies the Openwall crypt_blowfish wrapper.c vector %j', async (password, hash) => {
    await expect(verifyBcrypt(hash, password)).resolves.toBe(true);
    await expect(verifyBcrypt(hash, `x${password}`)).resolves.toBe(false);
  });

  it.each(JBCRYPT)('verifies the jBCrypt TestBCrypt.java vector %j', async (password, hash) => {
    await expect(verifyBcrypt(hash, password)).resolves.toBe(true);
    await expect(verifyBcrypt(hash, `${password}!`)).resolves.toBe(false);
  });

  it.each(LIBXCRYPT)('verifies the libxcrypt crypt(3) vector %j under $2a$, $2b$ and $2y$', async (password, rest) => {
    for (const v of ['2a', '2b', '2y']) {
      await expect(verifyBcrypt(`$${v}$05$${rest}`, password)).resolves.toBe(true);
      await expect(verifyBcrypt(`$${v}$05$${rest}`, `${password}!`)).resolves.toBe(password.length >= 72);
    }
  });

  it('verifies published $2a$ vectors relabelled $2b$ and $2y$ (the same computation below 256 bytes)', async () => {
    for (const [password, hash] of [...OPENWALL, ...JBCRYPT]) {
      await expect(verifyBcrypt(as('2b', hash), password)).resolves.toBe(true);
      await expect(verifyBcrypt(as('2y', hash), password)).resolves.toBe(true);
    }
  });

  it('uses only the first 72 bytes of the password (Openwall wrapper.c 72-byte vector)', async () => {
    await expect(verifyBcrypt(OPENWALL_72_HASH, OPENWALL_72)).resolves.toBe(true);
    await expect(verifyBcrypt(OPENWALL_72_HASH, `${OPENWALL_72}chars after 72 are ignored`)).resolves.toBe(true);
    await expect(verifyBcrypt(OPENWALL_72_HASH, OPENWALL_72.slice(0, 71))).resolves.toBe(false);
    // the cut is in bytes, not characters: 71 × "x" + "é" (2 UTF-8 bytes) keeps half of the é, not a 72nd "x"
    const x80 = `$2b$05$${LIBXCRYPT[4]![1]}`;
    await expect(verifyBcrypt(x80, 'x'.repeat(72))).resolves.toBe(true);
    await expect(verifyBcrypt(x80, 'x'.repeat(71))).resolves.toBe(false);
    await expect(verifyBcrypt(x80, `${'x'.repeat(71)}é`)).resolves.toBe(false);
  });

  it('verifies a cost-10 hash and refuses a wrong password', async () => {
    const hash = '$2b$10$N9qo8uLOickgx2ZMRZoMyemOmALaz80G8oca7cxlB2LiVQmRdvneC';
    await expect(verifyBcrypt(hash, 'Correct horse 1!')).resolves.toBe(true);
    await expect(verifyBcrypt(hash, 'correct horse 1!')).resolves.toBe(false);
  });

  it('leaves the event loop free while it computes (the former TypeScript Blowfish held it ~60 ms)', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('event loop turned'));
    const ok = await verifyBcrypt('$2b$10$N9qo8uLOickgx2ZMRZoMyemOmALaz80G8oca7cxlB2LiVQmRdvneC', 'Correct horse 1!');
    order.push('verified');
    expect(ok).toBe(true);
    expect(order).toEqual(['event loop turned', 'verified']);
  });

  it(`answers false, without rejecting, for malformed hashes and costs outside 4-${BCRYPT_MAX_COST}`, async () => {
    const rest = 'saltsaltsaltsaltsaltsOQA5/rH8YmmswkAwrQ22MNCNUhoOQ1Cy';
    const malformed = [
      '',
      '$2b$05$short',
      `$2x$05$${rest}`, // crypt_blowfish's sign-extension variant: not accepted before, not now
      `$2c$05$${rest}`,
      `$2$05$${rest}`,
      `$2b$31$${rest}`,
      `$2b$17$${rest}`,
      `$2b$03$${rest}`,
      `$2b$5$${rest}`,
      `$2b$+5$${rest}`,
      `$2b$05$${rest}x`,
      `$2b$05$${rest.slice(0, -1)}`,
      `$2b$05$${rest.slice(0, -1)}!`,
      `$2b$05$${rest.slice(0, -1)}é`,
      `$argon2id$${rest}`,
    ];
    for (const hash of malformed) await expect(verifyBcrypt(hash, 'Passw0rd!')).resolves.toBe(false);
    // the same checks reached through JS callers that ignore the types
    await expect(verifyBcrypt(null as unknown as string, 'Passw0rd!')).resolves.toBe(false);
    await expect(verifyBcrypt(`$2b$05$${rest}`, undefined as unknown as string)).resolves.toBe(false);
  });
});
