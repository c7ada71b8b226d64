import { describe, it, expect } from '@jest/globals';
import { blowfishInitialState, verifyBcrypt } from './bcrypt.ts';

// Vectors produced by glibc/libxcrypt crypt(3) on this machine (perl -e 'print crypt($pw, $salt)').
const X80 = 'x'.repeat(80);
const Y71 = 'y'.repeat(71);
const VECTORS: Array<[string, string]> = [
  ['', 'saltsaltsaltsaltsaltsOcZcRHTB1VrcTpZFY7csf4a7tfyWvusG'],
  ['a', 'saltsaltsaltsaltsaltsOAoKFSHL1Nd4Bf9QYurRji8UuhUkrd12'],
  ['Passw0rd!', 'saltsaltsaltsaltsaltsOQA5/rH8YmmswkAwrQ22MNCNUhoOQ1Cy'],
  ['pässwörd✓', 'saltsaltsaltsaltsaltsOO/N.5gyKTzL.Xq5zYRnLF1CCFrtnVYi'],
  [X80, 'saltsaltsaltsaltsaltsOdHbjRgv2wLF4t073uVLWDhg7YCRBcnK'],
  [Y71, 'saltsaltsaltsaltsaltsOUY6U1RChvkbXllbn/RliIbcT0mB.caG'],
];

describe('bcrypt verification (legacy hashes, behaviour.md §3.1)', () => {
  it('derives the Blowfish initial state from the digits of π', () => {
    const s = blowfishInitialState();
    expect(s).toHaveLength(1042);
    // P1, P18, S1[0] and S4[255] as printed in Schneier's reference tables
    expect([s[0], s[17], s[18], s[1041]].map((w) => w!.toString(16))).toEqual(['243f6a88', '8979fb1b', 'd1310ba6', '3ac372e6']);
  });

  it.each(VECTORS)('verifies %j under $2a$, $2b$ and $2y$', (password, rest) => {
    for (const v of ['2a', '2b', '2y']) {
      expect(verifyBcrypt(`$${v}$05$${rest}`, password)).toBe(true);
      expect(verifyBcrypt(`$${v}$05$${rest}`, `${password}!`)).toBe(password.length >= 72);
    }
  });

  it('uses only the first 72 bytes', () => {
    expect(verifyBcrypt(`$2b$05$${VECTORS[4]![1]}`, 'x'.repeat(72))).toBe(true);
    expect(verifyBcrypt(`$2b$05$${VECTORS[4]![1]}`, 'x'.repeat(71))).toBe(false);
  });

  it('verifies a cost-10 hash and refuses a wrong password', () => {
    const hash = '$2b$10$N9qo8uLOickgx2ZMRZoMyemOmALaz80G8oca7cxlB2LiVQmRdvneC';
    expect(verifyBcrypt(hash, 'Correct horse 1!')).toBe(true);
    expect(verifyBcrypt(hash, 'correct horse 1!')).toBe(false);
  });

  it('refuses malformed hashes and costs outside 4-16 without throwing', () => {
    expect(verifyBcrypt('$2x$05$saltsaltsaltsaltsaltsOQA5/rH8YmmswkAwrQ22MNCNUhoOQ1Cy', 'Passw0rd!')).toBe(false);
    expect(verifyBcrypt('$2b$31$saltsaltsaltsaltsaltsOQA5/rH8YmmswkAwrQ22MNCNUhoOQ1Cy', 'Passw0rd!')).toBe(false);
    expect(verifyBcrypt('$2b$03$saltsaltsaltsaltsaltsOQA5/rH8YmmswkAwrQ22MNCNUhoOQ1Cy', 'Passw0rd!')).toBe(false);
    expect(verifyBcrypt('$2b$05$short', 'x')).toBe(false);
  });
});
