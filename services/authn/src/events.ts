/**
 * @module @gatehouse/authn/events
 * Everything authn emits, in one place: the `user.*` domain events (behaviour.md §8) and the
 * `email.send` delivery jobs for its links, typed by the bus's contract (proto/gatehouse/events/v1,
 * `BusEvents` of @gatehouse/contracts), which the notifications worker consumes too. Each is written to the outbox through the running
 * transaction's `tx.events`, so it commits with the state change it announces and is published once,
 * after commit (ARCHITECTURE §4).
 */
import type { BusEvents } from '@gatehouse/contracts';
import { sealJobSecret, type KeyRing } from '@gatehouse/crypto';
import { publicUser } from './domain/user.ts';
import type { EventSink, UserRecord, VerificationPurpose } from './storage/ports.ts';

/**
 * A self-service account was created (signup, a magic link's first use): `user.created`, then
 * `user.signup`, with the same data (behaviour.md §8: exactly once per account).
 */
export function userSignedUp(events: EventSink, user: UserRecord, signupMethod: string): void {
  const data: BusEvents['user.created'] = { user: publicUser(user), signup_method: signupMethod };
  events.emit('user.created', data);
  events.emit('user.signup', data);
}

/** `user.login` for `user`, who was just issued tokens with `loginMethod`. */
export function userLoggedIn(events: EventSink, user: UserRecord, loginMethod: string): void {
  const data: BusEvents['user.login'] = { user: publicUser(user), login_method: loginMethod };
  events.emit('user.login', data);
}

/** `user.deactivated` for the deactivated record. */
export function userDeactivated(events: EventSink, user: UserRecord): void {
  const data: BusEvents['user.deactivated'] = { user: publicUser(user) };
  events.emit('user.deactivated', data);
}

/**
 * Queues one link mail to `to` for `user` (`verificationUrl` is the mailed link). The link carries a
 * live token, so it travels sealed (`sealed_variables`, AES-256-GCM under `jobKey`, issue 23): the
 * outbox row and the bus message hold no usable link; the notifications worker opens it to render.
 */
export function linkEmail(events: EventSink, jobKey: KeyRing, purpose: VerificationPurpose, to: string, user: UserRecord, verificationUrl: string): void {
  const sealed = sealJobSecret(jobKey, 'email.send', to, JSON.stringify({ verification_url: verificationUrl }));
  const job: BusEvents['email.send'] = { event_name: purpose, to, user: publicUser(user), variables: {}, sealed_variables: sealed };
  events.emit('email.send', job);
}
