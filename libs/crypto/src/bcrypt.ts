/**
 * @module @gatehouse/crypto/bcrypt
 * bcrypt verification for legacy hashes (`$2a$`, `$2b$`, `$2y$`; Provos & Mazières 1999, OpenBSD
 * bcrypt.c), in plain TypeScript: node:crypto has no EksBlowfish and no dependency is added.
 * Only verification exists: new hashes are argon2id (behaviour.md §3.1).
 */
import { timingSafeEqual } from 'node:crypto';

const BCRYPT_B64 = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HASH_RE = /^\$2([aby])\$(\d\d)\$([./A-Za-z0-9]{22})([./A-Za-z0-9]{31})$/;
/** Highest cost accepted: 2^16 rounds (about 5 s); anything above is treated as not verifiable. */
export const BCRYPT_MAX_COST = 16;

let initial: Uint32Array | undefined;

/**
 * Blowfish's initial P-array and S-boxes are the fractional hex digits of π (Schneier 1993):
 * 18 + 4·256 = 1042 words. They are computed once with Machin's formula
 * π = 16·atan(1/5) − 4·atan(1/239) in BigInt fixed point, instead of pasting 8 KB of constants.
 */
export function blowfishInitialState(): Uint32Array {
  if (initial) return initial;
  const words = 18 + 4 * 256;
  const bits = BigInt(words * 32);
  const guard = 64n;
  const scale = 1n << (bits + guard);
  const atanInv = (x: bigint): bigint => {
    let sum = 0n;
    let term = scale / x;
    const x2 = x * x;
    for (let k = 0n; term !== 0n; k++) {
      sum += (k % 2n === 0n ? term : -term) / (2n * k + 1n);
      term /= x2;
    }
    return sum;
  };
  const pi = (16n * atanInv(5n) - 4n * atanInv(239n)) >> guard;
  const frac = pi - (3n << bits);
  const out = new Uint32Array(words);
  for (let i = 0; i < words; i++) out[i] = Number((frac >> (bits - 32n * BigInt(i + 1))) & 0xffffffffn);
  initial = out;
  return out;
}

function decodeBase64(s: string, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let bitBuf = 0;
  let bitCount = 0;
  let o = 0;
  for (const ch of s) {
    bitBuf = (bitBuf << 6) | BCRYPT_B64.indexOf(ch);
    bitCount += 6;
    if (bitCount >= 8) {
      bitCount -= 8;
      if (o < bytes) out[o++] = (bitBuf >> bitCount) & 0xff;
    }
  }
  return out;
}

function encodeBase64(data: Uint8Array): string {
  let out = '';
  let bitBuf = 0;
  let bitCount = 0;
  for (const b of data) {
    bitBuf = ((bitBuf << 8) | b) & 0xffffff;
    bitCount += 8;
    while (bitCount >= 6) {
      bitCount -= 6;
      out += BCRYPT_B64[(bitBuf >> bitCount) & 0x3f];
    }
  }
  if (bitCount > 0) out += BCRYPT_B64[(bitBuf << (6 - bitCount)) & 0x3f];
  return out;
}

/** The raw bcrypt computation; returns the full `$2x$NN$salt+hash` string. */
function bcryptHash(minor: string, cost: number, saltB64: string, password: string): string {
  const init = blowfishInitialState();
  const P = init.slice(0, 18);
  const S = init.slice(18);
  // key: UTF-8 bytes + NUL, at most 72 bytes ($2a$/$2b$/$2y$ agree below 256 bytes)
  const pw = Buffer.from(password, 'utf8');
  const key = new Uint8Array(Math.min(pw.length + 1, 72));
  key.set(pw.subarray(0, key.length));
  const salt = decodeBase64(saltB64, 16);

  const F = (x: number): number =>
    ((((S[x >>> 24]! + S[256 + ((x >>> 16) & 0xff)]!) | 0) ^ S[512 + ((x >>> 8) & 0xff)]!) + S[768 + (x & 0xff)]!) | 0;
  const lr = new Int32Array(2);
  const encipher = (): void => {
    let l = lr[0]!;
    let r = lr[1]!;
    l ^= P[0]!;
    for (let i = 1; i <= 16; i += 2) {
      r ^= F(l) ^ P[i]!;
      l ^= F(r) ^ P[i + 1]!;
    }
    lr[0] = r ^ P[17]!;
    lr[1] = l;
  };
  const streamer = (data: Uint8Array) => {
    let pos = 0;
    return (): number => {
      let w = 0;
      for (let i = 0; i < 4; i++) {
        w = (w << 8) | data[pos]!;
        pos = (pos + 1) % data.length;
      }
      return w;
    };
  };
  const expand = (withSalt: Uint8Array | null, k: Uint8Array): void => {
    const keyWord = streamer(k);
    for (let i = 0; i < 18; i++) P[i] = P[i]! ^ keyWord();
    const saltWord = withSalt ? streamer(withSalt) : null;
    lr[0] = 0;
    lr[1] = 0;
    const fill = (arr: Uint32Array, n: number): void => {
      for (let i = 0; i < n; i += 2) {
        if (saltWord) {
          lr[0] = lr[0]! ^ saltWord();
          lr[1] = lr[1]! ^ saltWord();
        }
        encipher();
        arr[i] = lr[0]!;
        arr[i + 1] = lr[1]!;
      }
    };
    fill(P, 18);
    fill(S, 1024);
  };

  expand(salt, key);
  for (let round = 0, rounds = 2 ** cost; round < rounds; round++) {
    expand(null, key);
    expand(null, salt);
  }
  const ctext = Int32Array.from(streamerWords('OrpheanBeholderScryDoubt'));
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < 6; j += 2) {
      lr[0] = ctext[j]!;
      lr[1] = ctext[j + 1]!;
      encipher();
      ctext[j] = lr[0]!;
      ctext[j + 1] = lr[1]!;
    }
  }
  const out = new Uint8Array(24);
  for (let i = 0; i < 6; i++) {
    const w = ctext[i]! >>> 0;
    out.set([w >>> 24, (w >>> 16) & 0xff, (w >>> 8) & 0xff, w & 0xff], i * 4);
  }
  return `$2${minor}$${String(cost).padStart(2, '0')}$${saltB64}${encodeBase64(out.subarray(0, 23))}`;
}

function streamerWords(text: string): number[] {
  const b = Buffer.from(text, 'latin1');
  const words: number[] = [];
  for (let i = 0; i < b.length; i += 4) words.push(b.readInt32BE(i));
  return words;
}

/**
 * Verifies `password` against a bcrypt hash. Returns false (never throws) for malformed hashes and
 * for costs outside 4–{@link BCRYPT_MAX_COST}.
 */
export function verifyBcrypt(hash: string, password: string): boolean {
  const m = HASH_RE.exec(hash);
  if (!m) return false;
  const cost = Number(m[2]);
  if (cost < 4 || cost > BCRYPT_MAX_COST) return false;
  const computed = Buffer.from(bcryptHash(m[1]!, cost, m[3]!, password), 'latin1');
  const stored = Buffer.from(hash, 'latin1');
  return computed.length === stored.length && timingSafeEqual(computed, stored);
}
