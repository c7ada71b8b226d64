import { describe, it, expect } from '@jest/globals';
import argon2 from 'argon2';
import { dummyVerify, hashPassword, isBcryptHash, verifyPassword } from './password.ts';

describe('passwords', () => {
  it('hashes with argon2id m=19456 t=2 p=1, 16-byte salt and 32-byte hash in a PHC string', async () => {
    const hash = await hashPassword('Correct horse 1!');
    const m = /^\$argon2id\$v=19\$([a-z0-9=,]+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(hash);
    expect(m).not.toBeNull();
    // the argon2 package writes the parameters as m,p,t; compare them as a set
    expect(m![1]!.split(',').sort()).toEqual(['m=19456', 'p=1', 't=2']);
    m!.splice(1, 1);
    expect(Buffer.from(m![1]!, 'base64')).toHaveLength(16);
    expect(Buffer.from(m![2]!, 'base64')).toHaveLength(32);
    expect(await hashPassword('Correct horse 1!')).not.toBe(hash);
  });

  it('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('Passw0rd!');
    expect(await verifyPassword(hash, 'Passw0rd!')).toEqual({ ok: true, needsRehash: false });
    expect(await verifyPassword(hash, 'passw0rd!')).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword(hash, ' Passw0rd!')).toEqual({ ok: false, needsRehash: false });
  });

  it('flags weaker argon2 hashes for rehash after a successful verification', async () => {
    const weak = await argon2.hash('Passw0rd!', { type: argon2.argon2i, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    expect(await verifyPassword(weak, 'Passw0rd!')).toEqual({ ok: true, needsRehash: true });
  });

  it('verifies legacy bcrypt hashes and asks for a rehash', async () => {
    const bcrypt = '$2b$10$N9qo8uLOickgx2ZMRZoMyemOmALaz80G8oca7cxlB2LiVQmRdvneC';
    expect(isBcryptHash(bcrypt)).toBe(true);
    expect(await verifyPassword(bcrypt, 'Correct horse 1!')).toEqual({ ok: true, needsRehash: true });
    expect(await verifyPassword(bcrypt, 'anything')).toEqual({ ok: false, needsRehash: false });
  });

  it('treats malformed hashes as not verifiable without throwing', async () => {
    expect(await verifyPassword('', 'x')).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword('$argon2id$garbage', 'x')).toEqual({ ok: false, needsRehash: false });
  });

  it('dummyVerify costs about one real verification', async () => {
    const hash = await hashPassword('Passw0rd!');
    await dummyVerify();
    let t = performance.now();
    await verifyPassword(hash, 'nope');
    const real = performance.now() - t;
    t = performance.now();
    await dummyVerify('nope');
    const dummy = performance.now() - t;
    expect(dummy).toBeGreaterThan(real * 0.3);
  });
});
