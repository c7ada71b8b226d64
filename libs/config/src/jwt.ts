/** @module @gatehouse/config/jwt: startup checks of the token signing flags (spec §1 rule 4, behaviour.md §1.2-1.4). */

import { createPrivateKey, createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { Script } from 'node:vm';
import type { JwtType } from './parsers.ts';

/** The signing flags, as parsed (PEM values already normalised). */
export interface JwtFlags {
  readonly jwtType: JwtType | undefined;
  readonly jwtSecret: string | undefined;
  readonly jwtPrivateKey: string | undefined;
  readonly jwtPublicKey: string | undefined;
  readonly jwtSecondaryType: JwtType | undefined;
  readonly jwtSecondarySecret: string | undefined;
  readonly jwtSecondaryPublicKey: string | undefined;
  readonly customAccessTokenScript: string | undefined;
}

/** Node's curve names for ES256/384/512 (RFC 7518 §3.4) and the names people know them by. */
const CURVES: Readonly<Record<string, { node: string; label: string }>> = {
  ES256: { node: 'prime256v1', label: 'P-256' },
  ES384: { node: 'secp384r1', label: 'P-384' },
  ES512: { node: 'secp521r1', label: 'P-521' },
};
const CURVE_LABELS: Readonly<Record<string, string>> = { prime256v1: 'P-256', secp384r1: 'P-384', secp521r1: 'P-521' };

/** RFC 7518 §3.3: RSA keys for RS* are 2048 bits or larger (jose refuses smaller ones when signing). */
const MIN_RSA_BITS = 2048;

function family(type: JwtType): 'RSA' | 'EC' | 'HMAC' {
  if (type.startsWith('RS')) return 'RSA';
  if (type.startsWith('ES')) return 'EC';
  return 'HMAC';
}

/** Checks an asymmetric key's kind and size/curve against the algorithm; returns the problem or null. */
function keyProblem(key: KeyObject, type: JwtType, flag: string): string | null {
  const fam = family(type);
  const details = key.asymmetricKeyDetails ?? {};
  if (fam === 'RSA') {
    const bits = details.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) return `${flag} must be an RSA key of at least ${MIN_RSA_BITS} bits for ${type}, got ${bits}`;
    return null;
  }
  const want = CURVES[type] as { node: string; label: string };
  const have = details.namedCurve ?? 'unknown';
  if (have !== want.node) return `${flag} must use curve ${want.label} for ${type}, got ${CURVE_LABELS[have] ?? have}`;
  return null;
}

function parsePrivate(pemText: string, type: JwtType): KeyObject | null {
  try {
    const key = createPrivateKey({ key: pemText, format: 'pem' });
    return key.asymmetricKeyType === (family(type) === 'RSA' ? 'rsa' : 'ec') ? key : null;
  } catch {
    return null;
  }
}

/** A public key or an X.509 certificate; a private key pasted into a public-key flag is refused. */
function parsePublic(pemText: string, type: JwtType): KeyObject | null {
  if (/PRIVATE KEY-----/.test(pemText)) return null;
  try {
    const key = createPublicKey({ key: pemText, format: 'pem' });
    return key.asymmetricKeyType === (family(type) === 'RSA' ? 'rsa' : 'ec') ? key : null;
  } catch {
    return null;
  }
}

/**
 * behaviour.md §1.4's `<flag> is not a valid PEM <kind>`; when the value is no PEM at all but looks
 * like a file name, the message says the flag takes the PEM text or `file:<path>` (issue 15 item 7,
 * issue 37 §5: `$(cat key.pem)` would put a private key in the process list).
 */
function notPem(flag: string, value: string, kind: string): string {
  if (!value.includes('-----BEGIN') && /^(?:[./~]|[\w.-]+\.(?:pem|key|crt|pub)$)/.test(value.trim())) {
    return `${flag} is not a valid PEM ${kind}: it takes the PEM text, or file: and the path (for example ${flag}=file:${value.trim()})`;
  }
  return `${flag} is not a valid PEM ${kind}`;
}

/** RFC 7518 §3.2: an HMAC key for HS256/384/512 must be at least as long as the hash output. */
export const HMAC_MIN_BYTES: Readonly<Record<string, number>> = { HS256: 32, HS384: 48, HS512: 64 };

/**
 * The signing HS* secret when shorter than RFC 7518 §3.2 allows, as a message (fatal in production, warnings
 * with `--env=development`, issue 15 item 7).
 */
export function shortHmacSecrets(flags: JwtFlags): string[] {
  const out: string[] = [];
  const check = (flag: string, type: JwtType | undefined, secret: string | undefined): void => {
    const min = type === undefined ? undefined : HMAC_MIN_BYTES[type];
    if (min === undefined || secret === undefined) return;
    const bytes = Buffer.byteLength(secret, 'utf8');
    if (bytes < min) out.push(`${flag} is ${bytes} bytes; ${type} needs at least ${min} (RFC 7518 §3.2): use a long random value`);
  };
  // the secondary secret only verifies old tokens: rotating away from a short one must stay possible
  check('--jwt-secret', flags.jwtType, flags.jwtSecret);
  return out;
}

function sameKey(a: KeyObject, b: KeyObject): boolean {
  const der = (k: KeyObject): Buffer => k.export({ type: 'spki', format: 'der' });
  return der(a).equals(der(b));
}

/**
 * The signing key rules of behaviour.md §1.4: `--jwt-type` present and known; HS* needs
 * `--jwt-secret`; RS and ES algorithms need a PEM key pair of the right kind (RSA ≥ 2048 bits; EC on the
 * algorithm's curve, RFC 7518 §3.4) whose halves match. Then the rotation key of §1.2.
 *
 * @param invalidType true when `--jwt-type` was given but unsupported (already reported)
 * @returns one message per problem, in flag order
 */
export function checkJwt(flags: JwtFlags, invalidType: boolean): string[] {
  const errors: string[] = [];
  const type = flags.jwtType;
  if (type === undefined) {
    if (!invalidType) errors.push('--jwt-type is required');
  } else if (family(type) === 'HMAC') {
    if (flags.jwtSecret === undefined) errors.push(`--jwt-secret is required for ${type}`);
  } else if (flags.jwtPrivateKey === undefined || flags.jwtPublicKey === undefined) {
    errors.push(`--jwt-private-key and --jwt-public-key are required for ${type}`);
  } else {
    const fam = family(type);
    const priv = parsePrivate(flags.jwtPrivateKey, type);
    const pub = parsePublic(flags.jwtPublicKey, type);
    if (priv === null) errors.push(notPem('--jwt-private-key', flags.jwtPrivateKey, `${fam} private key`));
    if (pub === null) errors.push(notPem('--jwt-public-key', flags.jwtPublicKey, `${fam} public key`));
    const privProblem = priv === null ? null : keyProblem(priv, type, '--jwt-private-key');
    if (privProblem !== null) errors.push(privProblem);
    if (priv !== null && pub !== null && privProblem === null && !sameKey(createPublicKey(priv), pub)) {
      errors.push('--jwt-public-key does not match --jwt-private-key');
    }
  }
  errors.push(...checkSecondary(flags));
  return errors;
}

/** behaviour.md §1.2: the previous key, for verification only during rotation. */
function checkSecondary(flags: JwtFlags): string[] {
  const type = flags.jwtSecondaryType;
  if (type === undefined) {
    return flags.jwtSecondarySecret !== undefined || flags.jwtSecondaryPublicKey !== undefined
      ? ['--jwt-secondary-type is required with --jwt-secondary-secret or --jwt-secondary-public-key']
      : [];
  }
  if (family(type) === 'HMAC') {
    return flags.jwtSecondarySecret === undefined ? [`--jwt-secondary-secret is required for ${type}`] : [];
  }
  if (flags.jwtSecondaryPublicKey === undefined) return [`--jwt-secondary-public-key is required for ${type}`];
  const pub = parsePublic(flags.jwtSecondaryPublicKey, type);
  if (pub === null) return [notPem('--jwt-secondary-public-key', flags.jwtSecondaryPublicKey, `${family(type)} public key`)];
  const problem = keyProblem(pub, type, '--jwt-secondary-public-key');
  return problem === null ? [] : [problem];
}

/**
 * Compiles (never runs) `--custom-access-token-script`. The script is a JavaScript function
 * expression, `function (user, tokenPayload) { ...; return claims }` (the Authorizer format),
 * so it is compiled wrapped in parentheses as an expression.
 *
 * @returns `--custom-access-token-script does not compile: <reason>`, or null when it compiles
 */
export function checkCustomScript(script: string | undefined): string | null {
  if (script === undefined) return null;
  try {
    new Script(`(${script}\n)`, { filename: 'custom-access-token-script.js' });
    return null;
  } catch (e) {
    return `--custom-access-token-script does not compile: ${e instanceof Error ? e.message : String(e)}`;
  }
}
