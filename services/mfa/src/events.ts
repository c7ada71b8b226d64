/**
 * @module @gatehouse/mfa/events
 * What mfa puts on the bus, typed by the bus's contract (proto/gatehouse/events/v1, `BusEvents`): the
 * one-time code on its channel (behaviour.md §4.4 delivery: the `email.send` job of the `verify_otp`
 * template, or an `sms.send` job), and `audit.recorded` rows, written to the outbox in the
 * transaction that stores the code (ARCHITECTURE §4).
 */
import type { BusEvents, common } from '@gatehouse/contracts';
import { sealJobSecret, type KeyRing } from '@gatehouse/crypto';
import type { MfaTransaction, OtpChannel } from './storage/ports.ts';

/**
 * Queues a one-time code for delivery through the outbox of the running transaction: every code mfa
 * sends goes through here (login step 8, phone signup, forgot_password by phone, resend, the OTP
 * enrolments). The caller has checked the channel's provider (`assertChannelService`).
 * @param channel `email`: a `verify_otp` mail to `destination`; `sms`: a text message to `destination`
 * @param destination the email address or phone number the code goes to
 * @param code the plain code (it exists only in the job, never in mfa's tables)
 * @param user the User record the code is for (`{{.user.*}}` of the email template; its id for SMS)
 * @param jobKey the job seal key: the code travels sealed (`sealed_otp` / `sealed_variables`,
 *   AES-256-GCM, issue 23), so the outbox row and the bus message hold no usable code
 */
export function queueOtp(tx: MfaTransaction, jobKey: KeyRing, channel: OtpChannel, destination: string, code: string, user: common.User): void {
  if (channel === 'sms') {
    const job: BusEvents['sms.send'] = { to: destination, otp: '', user_id: user.id, sealed_otp: sealJobSecret(jobKey, 'sms.send', destination, code) };
    tx.events.emit('sms.send', job);
    return;
  }
  const sealed = sealJobSecret(jobKey, 'email.send', destination, JSON.stringify({ otp: code }));
  const job: BusEvents['email.send'] = { event_name: 'verify_otp', to: destination, user, variables: {}, sealed_variables: sealed };
  tx.events.emit('email.send', job);
}

