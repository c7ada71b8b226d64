/** @module @gatehouse/testing/tamper — changing a sealed value the way an attacker would, for tests. */

/**
 * Flips one bit of the first byte of a sealed value's payload (the last `.`-separated part,
 * base64url of `iv ‖ ciphertext ‖ tag`), so the result always differs from `sealed` in what it
 * decodes to. Changing a base64 character instead can land on padding bits that decode to the
 * same bytes, which made a tamper test pass by chance.
 *
 * @param sealed a `v1.<payload>` or `v2.<key id>.<payload>` value of `encrypt`
 * @returns the same value with one bit of the IV changed (AES-GCM then fails its tag check, SP 800-38D §7.2)
 */
export function flipOneBit(sealed: string): string {
  const cut = sealed.lastIndexOf('.');
  const bytes = Buffer.from(sealed.slice(cut + 1), 'base64url');
  bytes.writeUInt8(bytes.readUInt8(0) ^ 0x01, 0);
  return `${sealed.slice(0, cut + 1)}${bytes.toString('base64url')}`;
}
