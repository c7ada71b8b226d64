/**
 * @module @gatehouse/delivery/dev-outbox
 * The development outbox (issue 33 §4): with `--env=development` and no SMTP or no Twilio configured,
 * the notifications worker keeps the emails and text messages it would have sent here (the last 100,
 * in memory) instead of sending them, so the sign-up, password-reset and one-time-code flows can be
 * followed without a mail server. Admin reads them for the super-admin. Never built in production.
 */

/** Messages kept: the oldest is dropped when a new one arrives past this count. */
export const DEV_OUTBOX_CAPACITY = 100;

/** One message the worker would have sent. */
export interface DevOutboxMessage {
  /** a random id, unique in this process */
  readonly id: string;
  /** `email` or `sms` */
  readonly channel: 'email' | 'sms';
  /** the email address or the E.164 phone number */
  readonly to: string;
  /** the email's subject; for a text message, `sms` */
  readonly subject: string;
  /** the email's plain-text body, or the text message */
  readonly text: string;
  /** the email's HTML body; empty for a text message */
  readonly html: string;
  /** when it was kept, Unix seconds */
  readonly createdAt: number;
}

/** The kept messages of one process. */
export interface DevOutbox {
  /** Keeps a message, dropping the oldest past {@link DEV_OUTBOX_CAPACITY}. */
  add(message: Omit<DevOutboxMessage, 'id' | 'createdAt'>): DevOutboxMessage;
  /** The kept messages, newest first. */
  list(): readonly DevOutboxMessage[];
}

/**
 * Builds an empty development outbox.
 * @param capacity messages kept (default 100)
 * @param now Unix seconds (tests pin it)
 */
export function createDevOutbox(capacity = DEV_OUTBOX_CAPACITY, now: () => number = () => Math.floor(Date.now() / 1000)): DevOutbox {
  const kept: DevOutboxMessage[] = [];
  return {
    add(message) {
      const stored: DevOutboxMessage = { ...message, id: crypto.randomUUID(), createdAt: now() };
      kept.push(stored);
      if (kept.length > capacity) kept.splice(0, kept.length - capacity);
      return stored;
    },
    list: () => [...kept].reverse(),
  };
}
