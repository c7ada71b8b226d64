/**
 * @module @gatehouse/notifications/smtp/mailer
 * The SMTP transport (kept out of the transport-free domain/): sends one rendered email with nodemailer (flags `--smtp-*`, `--skip-tls-verification`,
 * service-spec §1; behaviour.md §5.5 "Sending").
 */
import type { Transporter } from 'nodemailer';
import { SpanKind, withSpan } from '@gatehouse/observability';

/** One message ready to send. `to` is a bare address. */
export interface OutgoingEmail {
  readonly to: string;
  readonly subject: string;
  readonly html: string;
  readonly text: string;
}

/** What the worker needs from a mail transport. Tests swap in a failing one. */
export interface Mailer {
  /** Resolves once the SMTP server accepted the message; rejects on any refusal or network error. */
  send(msg: OutgoingEmail): Promise<{ messageId: string }>;
  /** Releases the transport, if it holds anything. */
  close?(): Promise<void>;
}

export interface SmtpOptions {
  /** `--smtp-host` */
  readonly host: string;
  /** `--smtp-port`; 465 means implicit TLS, anything else plain SMTP upgraded by STARTTLS when offered */
  readonly port: number;
  /** `--smtp-username`; no AUTH when absent */
  readonly username?: string | undefined;
  /** `--smtp-password` */
  readonly password?: string | undefined;
  /** `--smtp-sender-email` */
  readonly senderEmail: string;
  /** `--smtp-sender-name`; main passes `--organization-name` when the flag is unset (behaviour.md §1.3) */
  readonly senderName: string;
  /** `--smtp-local-name`: the name sent in EHLO/HELO; nodemailer's default (the host name) when absent */
  readonly localName?: string | undefined;
  /** `--skip-tls-verification`: accept any server certificate */
  readonly skipTlsVerification: boolean;
  /**
   * connect, greeting and socket-idle timeouts in ms (default 10000 / 10000 / 20000), so a hung
   * server fails the attempt instead of holding the consumer (JetStream redelivers after 30 s)
   */
  readonly timeoutsMs?: { readonly connection?: number; readonly greeting?: number; readonly socket?: number };
}

/**
 * The From mailbox `"<name>" <address>` (behaviour.md §5.5). nodemailer writes the header and
 * quotes or RFC 2047-encodes the display name only where RFC 5322 §3.2.5 needs it, so a plain
 * name appears unquoted (`Acme <no-reply@acme.test>`), which is the same mailbox.
 */
export function fromMailbox(name: string, address: string): { name: string; address: string } {
  return { name: name.replace(/[\r\n]+/g, ' ').trim(), address };
}

/**
 * Builds the SMTP mailer. One connection per message (no pool), so a refused or broken session
 * never poisons the next attempt. TLS: implicit on port 465; otherwise STARTTLS whenever the
 * server offers it (nodemailer's default; a failed upgrade fails the send rather than falling
 * back to plaintext). Certificates are verified unless `skipTlsVerification`.
 */
export function createSmtpMailer(options: SmtpOptions): Mailer {
  // nodemailer (≈ 4.5 MiB of heap) loads with the first message, not at start-up (issue 22 §3)
  let transport: Promise<Transporter> | undefined;
  const open = async (): Promise<Transporter> => (await import('nodemailer')).createTransport({
    host: options.host,
    port: options.port,
    secure: options.port === 465,
    ...(options.localName ? { name: options.localName } : {}),
    ...(options.username ? { auth: { user: options.username, pass: options.password ?? '' } } : {}),
    tls: { rejectUnauthorized: !options.skipTlsVerification },
    connectionTimeout: options.timeoutsMs?.connection ?? 10_000,
    greetingTimeout: options.timeoutsMs?.greeting ?? 10_000,
    socketTimeout: options.timeoutsMs?.socket ?? 20_000,
    // Message parts are strings we built; never let a body reference local files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
  });
  const from = fromMailbox(options.senderName, options.senderEmail);
  return {
    async send(msg) {
      // the last hop of a traced request (issue 15): a CLIENT span around the SMTP transaction
      return withSpan('smtp send', { kind: SpanKind.CLIENT, attributes: { 'server.address': options.host, 'server.port': options.port } }, async () => {
        const info = await (await (transport ??= open())).sendMail({ from, to: msg.to, subject: msg.subject, html: msg.html, text: msg.text });
        return { messageId: info.messageId };
      });
    },
    async close() {
      (await transport?.catch(() => undefined))?.close();
    },
  };
}
