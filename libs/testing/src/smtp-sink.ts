/**
 * @module @gatehouse/testing/smtp-sink
 * A real SMTP server (`smtp-server`) on 127.0.0.1 for e2e tests: keeps every message it accepts,
 * extracts the links in them, and can refuse the first N sessions with a transient 451 reply
 * (RFC 5321 §4.2.2) to exercise the worker's retries.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { parseMail, type ParsedMail } from './mime.ts';

export interface SinkMail extends ParsedMail {
  /** SMTP envelope recipients, lower-cased */
  readonly rcptTo: readonly string[];
  /** every http(s) URL in the text part, else in the HTML part (entities decoded), in order */
  readonly links: readonly string[];
  /** Date.now() when it arrived */
  readonly receivedAt: number;
}

export interface SmtpSinkOptions {
  /** refuse the first `n` SMTP sessions at RCPT TO with `451 4.3.0 try again later` (default 0) */
  refuseFirstSessions?: number;
  /** the address to listen on (default 127.0.0.1), e.g. a node address that a cluster's pods reach */
  host?: string;
}

export interface SmtpSink {
  readonly host: string;
  readonly port: number;
  /** accepted messages, in arrival order */
  readonly messages: readonly SinkMail[];
  /** SMTP sessions opened so far (refused ones included) */
  sessions(): number;
  /** sessions refused so far */
  refused(): number;
  /** refuse the next `n` sessions (on top of any still pending) */
  refuseNext(n: number): void;
  /** messages whose envelope recipients include `address` (case-insensitive) */
  to(address: string): SinkMail[];
  /**
   * Resolves with the `count`-th message to `address` (1-based, default 1) once it arrived.
   * @throws Error after `timeoutMs` (default 15 s)
   */
  waitForMail(address: string, options?: { count?: number; timeoutMs?: number }): Promise<SinkMail>;
  /** the first link of `mail` that contains `token=` */
  tokenLink(mail: SinkMail): URL;
  /** the one-time code of a `verify_otp` mail: its text line of 6 characters from the OTP alphabet (behaviour.md §4.4) */
  otpOf(mail: SinkMail): string;
  close(): Promise<void>;
}

const decodeEntities = (s: string): string =>
  s.replace(/&amp;/g, '&').replace(/&#x3D;|&#61;/gi, '=').replace(/&quot;/g, '"').replace(/&#39;|&#x27;/gi, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');

/** http(s) URLs in a text (or decoded HTML) body. */
export function extractLinks(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) => m[0].replace(/[).,;]+$/, ''));
}

/** Starts the sink on `options.host` (default 127.0.0.1), port 0 (no STARTTLS, no AUTH). Always `close()` it. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMail[] = [];
  let sessions = 0;
  let refused = 0;
  let toRefuse = options.refuseFirstSessions ?? 0;
  const refusedSessions = new WeakSet<SMTPServerSession>();
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    onConnect(session, cb) {
      sessions++;
      if (toRefuse > 0) {
        toRefuse--;
        refusedSessions.add(session);
      }
      cb();
    },
    onRcptTo(_address, session, cb) {
      if (refusedSessions.has(session)) {
        refused++;
        return cb(Object.assign(new Error('4.3.0 try again later'), { responseCode: 451 }));
      }
      return cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const parsed = parseMail(Buffer.concat(chunks).toString('utf8'));
        const links = extractLinks(parsed.text);
        messages.push({
          ...parsed,
          rcptTo: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          links: links.length > 0 ? links : extractLinks(decodeEntities(parsed.html)),
          receivedAt: Date.now(),
        });
        cb();
        for (const w of [...waiters]) w();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  const to = (address: string): SinkMail[] => messages.filter((m) => m.rcptTo.includes(address.toLowerCase()));

  return {
    host: options.host ?? '127.0.0.1',
    port,
    messages,
    sessions: () => sessions,
    refused: () => refused,
    refuseNext(n) {
      toRefuse += n;
    },
    to,
    async waitForMail(address, { count = 1, timeoutMs = 15_000 } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = to(address)[count - 1];
        if (hit) return hit;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`smtp sink: ${to(address).length} of ${count} message(s) to ${address} after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            waiters.delete(done);
            resolve();
          };
          const timer = setTimeout(done, left);
          waiters.add(done);
        });
      }
    },
    tokenLink(mail) {
      const link = mail.links.find((l) => l.includes('token='));
      if (!link) throw new Error(`smtp sink: no link with a token in "${mail.subject}"`);
      return new URL(link);
    },
    otpOf(mail) {
      const code = (mail.text ?? '').split('\n').map((l) => l.trim()).find((l) => /^[ABCDEFGHJKLMNPQRSTUVWXYZ1-9]{6}$/.test(l));
      if (!code) throw new Error(`smtp sink: no one-time code in "${mail.subject}"`);
      return code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
