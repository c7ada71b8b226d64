/**
 * @module @gatehouse/notifications/twilio/sender
 * The SMS transport (kept out of the transport-free domain/): sends one text message through the
 * `twilio` client's Messages API (flags `--twilio-*`, behaviour.md §1.3, §4.4).
 */
import { createRequire } from 'node:module';
import type Twilio from 'twilio';

/** One text message ready to send. `to` is the user's stored phone number. */
export interface OutgoingSms {
  readonly to: string;
  readonly body: string;
}

/** What the worker needs from an SMS transport. Tests point the real one at a stand-in. */
export interface SmsSender {
  /** Resolves with the message SID once Twilio accepted the message; rejects on any refusal or network error. */
  send(msg: OutgoingSms): Promise<{ sid: string }>;
}

export interface TwilioOptions {
  /** `--twilio-account-sid` (`AC…`) */
  readonly accountSid: string;
  /** `--twilio-api-key` (`SK…`): the API key SID, the Basic-auth user */
  readonly apiKey: string;
  /** `--twilio-api-secret`: the API key secret */
  readonly apiSecret: string;
  /** `--twilio-sender`: an E.164 number, or a Messaging Service SID (`MG…`) */
  readonly sender: string;
  /**
   * `--twilio-api-url` (development and testing only): the base URL of a stand-in for
   * `https://api.twilio.com`; the client's own default when absent
   */
  readonly apiUrl?: string | undefined;
  /** request timeout in ms (default 10000), so a hung API fails the attempt instead of holding the consumer */
  readonly timeoutMs?: number | undefined;
}

/**
 * True when Twilio refused the request for good: a 4xx answer other than 429 (bad number, unverified
 * sender, bad credentials). Such a job is dead-lettered at once; 429, 5xx and network errors retry.
 */
export function isPermanentTwilioFailure(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 && status !== 429;
}

/**
 * Builds the Twilio sender. The client authenticates with the API key and secret for the account
 * (`twilio(apiKey, apiSecret, { accountSid })`); its own retries are off, the bus retries.
 */
export function createTwilioSender(options: TwilioOptions): SmsSender {
  // loaded here, only when SMS is configured (issue 22 §3: the client library is a noticeable part of the start-up)
  const twilio = createRequire(import.meta.url)('twilio') as typeof Twilio;
  const client = twilio(options.apiKey, options.apiSecret, {
    accountSid: options.accountSid,
    timeout: options.timeoutMs ?? 10_000,
    autoRetry: false,
  });
  if (options.apiUrl) client.api.baseUrl = options.apiUrl;
  const from = options.sender.startsWith('MG') ? { messagingServiceSid: options.sender } : { from: options.sender };
  return {
    async send(msg) {
      const message = await client.messages.create({ to: msg.to, body: msg.body, ...from });
      return { sid: message.sid };
    },
  };
}
