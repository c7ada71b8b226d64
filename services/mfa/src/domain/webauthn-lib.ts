/** @module webauthn-lib: @simplewebauthn/server, loaded on first use. */
import type * as SimpleWebAuthn from '@simplewebauthn/server';

let loading: Promise<typeof SimpleWebAuthn> | null = null;

/**
 * The @simplewebauthn/server module (W3C WebAuthn Level 3 ceremonies), loaded by the first passkey
 * ceremony rather than at start-up: with its X.509/ASN.1 stack it is a noticeable share of a process's
 * start-up CPU and memory (issue 22 §3), which a deployment without passkeys never needs.
 */
export function webauthn(): Promise<typeof SimpleWebAuthn> {
  return (loading ??= import('@simplewebauthn/server'));
}
