/**
 * @module notifications/test/smtp-sink
 * A real SMTP server (smtp-server) on 127.0.0.1, port 0, that keeps what it receives and can
 * refuse chosen sessions, for tests of the notifications worker.
 */
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { parseMail, type ParsedMail } from '@gatehouse/testing';

export interface ReceivedMail extends ParsedMail {
  /** SMTP envelope sender and recipients */
  readonly mailFrom: string;
  readonly rcptTo: readonly string[];
  /** the EHLO/HELO name the client sent */
  readonly clientName: string;
  /** AUTH username, when the client authenticated */
  readonly user: string | undefined;
  readonly secure: boolean;
}

export interface SinkOptions {
  /**
   * Called at RCPT TO with the 1-based number of the session; return an SMTP reply code and
   * message to refuse the recipient, or null to accept.
   */
  refuse?: (session: number) => { code: number; message: string } | null;
  /** accepted AUTH credentials; when set, AUTH is required */
  credentials?: { username: string; password: string };
  /** disable STARTTLS (otherwise offered with smtp-server's built-in self-signed certificate) */
  noStartTls?: boolean;
}

export interface SmtpSink {
  readonly port: number;
  readonly received: ReceivedMail[];
  /** number of SMTP sessions opened so far */
  sessions(): number;
  /** resolves once at least `count` messages arrived; rejects after `timeoutMs` */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpSink(options: SinkOptions = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  let sessions = 0;
  const sessionNumbers = new WeakMap<SMTPServerSession, number>();
  const numberOf = (s: SMTPServerSession): number => {
    let n = sessionNumbers.get(s);
    if (n === undefined) {
      n = ++sessions;
      sessionNumbers.set(s, n);
    }
    return n;
  };
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    logger: false,
    authOptional: !options.credentials,
    disabledCommands: options.noStartTls ? ['STARTTLS'] : [],
    onConnect(session, cb) {
      numberOf(session);
      cb();
    },
    onAuth(auth, _session, cb) {
      const c = options.credentials;
      if (c && auth.username === c.username && auth.password === c.password) return cb(null, { user: auth.username });
      return cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(_address, session, cb) {
      const refusal = options.refuse?.(numberOf(session));
      if (refusal) return cb(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
      return cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          ...parseMail(raw),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          clientName: session.hostNameAppearsAs,
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
        });
        cb();
        for (const w of waiters.splice(0)) w();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    sessions: () => sessions,
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`smtp sink: ${received.length} of ${count} messages after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
