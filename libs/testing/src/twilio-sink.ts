/**
 * @module @gatehouse/testing/twilio-sink
 * A stand-in for Twilio's Messages API on 127.0.0.1 for tests: the real `twilio` client is pointed at
 * it (`--twilio-api-url`, `client.api.baseUrl`). It answers `POST /2010-04-01/Accounts/<sid>/Messages.json`
 * as Twilio does (HTTP Basic auth with the API key and secret, a form body with `To`, `From` or
 * `MessagingServiceSid`, and `Body`; 201 with the message resource), records each accepted message,
 * and can be told to fail the next requests with a Twilio error body.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The flags a deployment needs to send through the sink (all four `--twilio-*` plus the URL). */
export const TWILIO_TEST_CREDENTIALS = {
  accountSid: 'AC00000000000000000000000000000001',
  apiKey: 'SK00000000000000000000000000000001',
  apiSecret: 'twilio-test-secret',
  sender: '+15005550006',
} as const;

export interface SmsMessage {
  /** Twilio's message SID (`SM` + 32 hex) */
  readonly sid: string;
  readonly accountSid: string;
  readonly to: string;
  /** `From`, or null when a Messaging Service SID was sent instead */
  readonly from: string | null;
  readonly messagingServiceSid: string | null;
  readonly body: string;
  /** Date.now() when it arrived */
  readonly receivedAt: number;
}

export interface TwilioSinkOptions {
  /** credentials the sink accepts (default {@link TWILIO_TEST_CREDENTIALS}) */
  accountSid?: string;
  apiKey?: string;
  apiSecret?: string;
  /** fail the first `n` message requests with 503 (default 0) */
  failFirst?: number;
}

export interface TwilioSink {
  /** `http://127.0.0.1:<port>`: the base URL for `--twilio-api-url` */
  readonly url: string;
  readonly port: number;
  /** accepted messages, in arrival order */
  readonly messages: readonly SmsMessage[];
  /** message requests received so far (failed and refused ones included) */
  requests(): number;
  /** requests answered with an injected failure so far */
  failed(): number;
  /** answer the next `n` message requests with `status` (default 503) and a Twilio error body */
  failNext(n: number, status?: number): void;
  /** the flags that point a deployment at this sink */
  flags(): string[];
  /** accepted messages to `phone` (exact, as sent) */
  to(phone: string): SmsMessage[];
  /**
   * Resolves with the `count`-th message to `phone` (1-based, default 1) once it arrived.
   * @throws Error after `timeoutMs` (default 15 s)
   */
  waitForSms(phone: string, options?: { count?: number; timeoutMs?: number }): Promise<SmsMessage>;
  /** the code of a `Your verification code is: <code>` message (behaviour.md §4.4) */
  otpOf(message: SmsMessage): string;
  close(): Promise<void>;
}

const MESSAGES_PATH = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/;

/** Starts the sink on 127.0.0.1, port 0. Always `close()` it. */
export async function startTwilioSink(options: TwilioSinkOptions = {}): Promise<TwilioSink> {
  const accountSid = options.accountSid ?? TWILIO_TEST_CREDENTIALS.accountSid;
  const apiKey = options.apiKey ?? TWILIO_TEST_CREDENTIALS.apiKey;
  const apiSecret = options.apiSecret ?? TWILIO_TEST_CREDENTIALS.apiSecret;
  const messages: SmsMessage[] = [];
  const waiters = new Set<() => void>();
  let requests = 0;
  let failed = 0;
  let toFail = options.failFirst ?? 0;
  let failStatus = 503;

  const reply = (res: http.ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const error = (res: http.ServerResponse, status: number, code: number, message: string): void =>
    reply(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = MESSAGES_PATH.exec(new URL(req.url ?? '/', 'http://sink').pathname);
      if (req.method !== 'POST' || !path) return error(res, 404, 20404, 'The requested resource was not found');
      requests++;
      const expected = `Basic ${Buffer.from(`${apiKey}:${apiSecret}`).toString('base64')}`;
      if (req.headers.authorization !== expected || path[1] !== accountSid) return error(res, 401, 20003, 'Authenticate');
      if (toFail > 0) {
        toFail--;
        failed++;
        return error(res, failStatus, 20500, 'Internal Server Error');
      }
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const to = form.get('To');
      const body = form.get('Body');
      const from = form.get('From');
      const messagingServiceSid = form.get('MessagingServiceSid');
      if (!to) return error(res, 400, 21604, "A 'To' phone number is required.");
      if (!from && !messagingServiceSid) return error(res, 400, 21603, "A 'From' phone number is required.");
      if (!body) return error(res, 400, 21602, 'Message body is required.');
      const message: SmsMessage = {
        sid: `SM${randomBytes(16).toString('hex')}`, accountSid, to, from, messagingServiceSid, body, receivedAt: Date.now(),
      };
      messages.push(message);
      for (const w of [...waiters]) w();
      const created = new Date(message.receivedAt).toUTCString();
      return reply(res, 201, {
        sid: message.sid, account_sid: accountSid, to, from, messaging_service_sid: messagingServiceSid, body,
        status: 'queued', direction: 'outbound-api', num_segments: '1', date_created: created, date_updated: created,
        api_version: '2010-04-01', uri: `/2010-04-01/Accounts/${accountSid}/Messages/${message.sid}.json`,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const to = (phone: string): SmsMessage[] => messages.filter((m) => m.to === phone);

  return {
    url,
    port,
    messages,
    requests: () => requests,
    failed: () => failed,
    failNext(n, status = 503) {
      toFail += n;
      failStatus = status;
    },
    flags: () => [
      `--twilio-account-sid=${accountSid}`, `--twilio-api-key=${apiKey}`, `--twilio-api-secret=${apiSecret}`,
      `--twilio-sender=${TWILIO_TEST_CREDENTIALS.sender}`, `--twilio-api-url=${url}`,
    ],
    to,
    async waitForSms(phone, o = {}) {
      const count = o.count ?? 1;
      const timeoutMs = o.timeoutMs ?? 15_000;
      const found = (): SmsMessage | undefined => to(phone)[count - 1];
      const hit = found();
      if (hit) return hit;
      return new Promise<SmsMessage>((resolve, reject) => {
        const check = (): void => {
          const m = found();
          if (!m) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no SMS #${count} to ${phone} within ${timeoutMs} ms (${to(phone).length} received)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    otpOf(message) {
      const m = /^Your verification code is: ([A-HJ-NP-Z1-9]{6})$/.exec(message.body);
      if (!m) throw new Error(`not an OTP message: ${JSON.stringify(message.body)}`);
      return m[1]!;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
