/** @module mailer.int.test: the nodemailer SMTP mailer against a real SMTP server (smtp-server on 127.0.0.1:0). */
import { describe, it, expect, afterEach } from '@jest/globals';
import { createSmtpMailer, type SmtpOptions } from '../src/smtp/mailer.ts';
import { startSmtpSink, type SmtpSink } from './smtp-sink.ts';

const MSG = { to: 'ann@acme.test', subject: 'Réinitialiser — Reset Password', html: '<p>Hello <b>Ann</b> é</p>', text: 'Hello Ann é' };

let sink: SmtpSink | undefined;
afterEach(async () => {
  await sink?.close();
  sink = undefined;
});

const options = (port: number, extra: Partial<SmtpOptions> = {}): SmtpOptions => ({
  host: '127.0.0.1', port, senderEmail: 'no-reply@acme.test', senderName: 'Acme "Auth"', skipTlsVerification: true,
  timeoutsMs: { connection: 3000, greeting: 3000, socket: 5000 }, ...extra,
});

describe('createSmtpMailer', () => {
  it('sends an HTML mail with a text alternative from "<sender name>" <sender email>, upgrading with STARTTLS', async () => {
    sink = await startSmtpSink();
    const mailer = createSmtpMailer(options(sink.port, { localName: 'mx.gatehouse.test' }));
    const { messageId } = await mailer.send(MSG);
    const [mail] = await sink.waitFor(1);
    expect(mail!.from).toBe('"Acme \\"Auth\\"" <no-reply@acme.test>');
    expect(mail!.mailFrom).toBe('no-reply@acme.test');
    expect(mail!.to).toBe('ann@acme.test');
    expect(mail!.rcptTo).toEqual(['ann@acme.test']);
    expect(mail!.subject).toBe(MSG.subject);
    expect(mail!.html).toBe(MSG.html);
    expect(mail!.text).toBe(MSG.text);
    expect(mail!.messageId).toBe(messageId);
    expect(mail!.clientName).toBe('mx.gatehouse.test');
    expect(mail!.secure).toBe(true);
    await mailer.close?.();
  });

  it('verifies the server certificate unless --skip-tls-verification is set', async () => {
    sink = await startSmtpSink(); // STARTTLS with smtp-server's self-signed localhost certificate
    const mailer = createSmtpMailer(options(sink.port, { skipTlsVerification: false }));
    await expect(mailer.send(MSG)).rejects.toThrow(/certificate/i);
    expect(sink.received).toHaveLength(0);
  });

  it('stays on plain SMTP when the server offers no STARTTLS', async () => {
    sink = await startSmtpSink({ noStartTls: true });
    const mailer = createSmtpMailer(options(sink.port, { skipTlsVerification: false }));
    await mailer.send(MSG);
    const [mail] = await sink.waitFor(1);
    expect(mail!.secure).toBe(false);
  });

  it('authenticates with --smtp-username and --smtp-password', async () => {
    sink = await startSmtpSink({ credentials: { username: 'mailer', password: 's3cret' } });
    await createSmtpMailer(options(sink.port, { username: 'mailer', password: 's3cret' })).send(MSG);
    const [mail] = await sink.waitFor(1);
    expect(mail!.user).toBe('mailer');
    await expect(createSmtpMailer(options(sink.port, { username: 'mailer', password: 'wrong' })).send(MSG))
      .rejects.toMatchObject({ responseCode: 535 });
  });

  it('rejects with the SMTP reply code when the server refuses the recipient', async () => {
    sink = await startSmtpSink({ refuse: () => ({ code: 451, message: 'try again later' }) });
    await expect(createSmtpMailer(options(sink.port)).send(MSG)).rejects.toMatchObject({ responseCode: 451 });
    expect(sink.received).toHaveLength(0);
  });

  it('writes a sender name that needs quoting as a quoted string and drops line breaks from it', async () => {
    sink = await startSmtpSink();
    await createSmtpMailer(options(sink.port, { senderName: 'Acme, Inc.\r\nBcc: evil@x.test' })).send(MSG);
    const [mail] = await sink.waitFor(1);
    expect(mail!.from).toBe('"Acme, Inc. Bcc: evil@x.test" <no-reply@acme.test>');
    expect(mail!.root.headers.has('bcc')).toBe(false);
  });

  it('rejects when nothing listens on the port', async () => {
    sink = await startSmtpSink();
    const port = sink.port;
    await sink.close();
    sink = undefined;
    await expect(createSmtpMailer(options(port)).send(MSG)).rejects.toThrow(/ECONNREFUSED/);
  });
});
