/**
 * @module @gatehouse/authn/events
 * Everything authn emits, in one place: the `user.*` domain events (behaviour.md §8) and the
 * `email.send` delivery jobs for its links (the contract the notifications worker consumes; services
 * never import each other, ARCHITECTURE §2). Each is written to the outbox through the running
 * transaction's `tx.events`, so it commits with the state change it announces and is published once,
 * after commit (ARCHITECTURE §4).
 */
import type { common } from '@gatehouse/contracts';
import { publicUser } from './domain/user.ts';
import type { EventSink, UserRecord, VerificationPurpose } from './storage/ports.ts';

/** Event and job names (behaviour.md §8; `email.send` is a delivery job, not a webhook event). */
export const USER_CREATED = 'user.created';
export const USER_SIGNUP = 'user.signup';
export const USER_LOGIN = 'user.login';
export const USER_DEACTIVATED = 'user.deactivated';
export const EMAIL_SEND = 'email.send';

/** `user.created` and `user.signup`: the new account, and how it was created. */
export interface UserSignedUp {
  user: common.User;
  /** `basic_auth`, `mobile_basic_auth`, `magic_link_login` */
  signup_method: string;
}

/** `user.login`: tokens were issued by a login-type flow (not by /v1/session). */
export interface UserLoggedIn {
  user: common.User;
  /** the session's login method (`basic_auth`, `magic_link_login`, ...) */
  login_method: string;
}

/** `user.deactivated`: the user as deactivated (`revoked_timestamp` set). */
export interface UserDeactivated {
  user: common.User;
}

/** The data of an `email.send` envelope (link mails only: authn sends no OTP mails). */
export interface EmailJob {
  /** the email template event (behaviour.md §5.5) */
  event_name: VerificationPurpose;
  /** recipient address */
  to: string;
  /** the User record (behaviour.md §5.3) for `{{.user.*}}` */
  user: common.User;
  /** `verification_url`: built from `--url`, never from a Host header (behaviour.md §1.1) */
  variables: { verification_url: string };
}

/**
 * A self-service account was created (signup, a magic link's first use): `user.created`, then
 * `user.signup`, with the same data (behaviour.md §8: exactly once per account).
 */
export function userSignedUp(events: EventSink, user: UserRecord, signupMethod: string): void {
  const data: UserSignedUp = { user: publicUser(user), signup_method: signupMethod };
  events.emit(USER_CREATED, data);
  events.emit(USER_SIGNUP, data);
}

/** `user.login` for `user`, who was just issued tokens with `loginMethod`. */
export function userLoggedIn(events: EventSink, user: UserRecord, loginMethod: string): void {
  const data: UserLoggedIn = { user: publicUser(user), login_method: loginMethod };
  events.emit(USER_LOGIN, data);
}

/** `user.deactivated` for the deactivated record. */
export function userDeactivated(events: EventSink, user: UserRecord): void {
  const data: UserDeactivated = { user: publicUser(user) };
  events.emit(USER_DEACTIVATED, data);
}

/** Queues one link mail to `to` for `user` (`verificationUrl` is the mailed link). */
export function linkEmail(events: EventSink, purpose: VerificationPurpose, to: string, user: UserRecord, verificationUrl: string): void {
  const job: EmailJob = { event_name: purpose, to, user: publicUser(user), variables: { verification_url: verificationUrl } };
  events.emit(EMAIL_SEND, job);
}
