/**
 * @module @gatehouse/notifications/dev-outbox
 * The development outbox's transports (issue 33 §4): a Mailer and an SmsSender that keep each message in
 * the process's development outbox (libs/delivery) and log one info line for it, instead of sending.
 * main.ts uses them only under `--env=development` for a channel without its provider (Config's
 * `devOutbox`), so the whole worker (rendering, stored templates, attempts, idempotency) runs as in
 * production up to the transport.
 */
import type { DevOutbox } from '@gatehouse/delivery';
import type { Logger } from '@gatehouse/observability';
import type { Mailer } from './smtp/mailer.ts';
import type { SmsSender } from './twilio/sender.ts';

/** Longest body written to the log line; the outbox keeps the whole message. */
const LOGGED_TEXT_CHARS = 2000;

/** http(s) links of a plain-text body, for the log line (verification, reset and magic links). */
const linksOf = (text: string): string[] => [...new Set(text.match(/https?:\/\/[^\s<>"')\]]+/g) ?? [])];

/**
 * A Mailer that keeps each rendered email in `outbox` and logs `development outbox: email kept` with the
 * recipient, subject and links. The links and codes in the line are development-only (never built in production).
 * @returns a Mailer whose `send` never fails; `messageId` is the outbox row's id
 */
export function devOutboxMailer(outbox: DevOutbox, logger: Logger): Mailer {
  return {
    async send(msg) {
      const kept = outbox.add({ channel: 'email', to: msg.to, subject: msg.subject, text: msg.text, html: msg.html });
      logger.info({ channel: 'email', to: msg.to, subject: msg.subject, links: linksOf(msg.text), text: msg.text.slice(0, LOGGED_TEXT_CHARS) },
        'development outbox: email kept');
      return { messageId: kept.id };
    },
  };
}

/**
 * An SmsSender that keeps each text message in `outbox` and logs `development outbox: sms kept` with the
 * recipient and the message (it holds the one-time code: development only).
 * @returns an SmsSender whose `send` never fails; `sid` is the outbox row's id
 */
export function devOutboxSmsSender(outbox: DevOutbox, logger: Logger): SmsSender {
  return {
    async send(msg) {
      const kept = outbox.add({ channel: 'sms', to: msg.to, subject: 'sms', text: msg.body, html: '' });
      logger.info({ channel: 'sms', to: msg.to, text: msg.body }, 'development outbox: sms kept');
      return { sid: kept.id };
    },
  };
}
