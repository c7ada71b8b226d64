/**
 * @module @gatehouse/notifications/domain/default-templates
 * The built-in subjects and bodies used when no template is stored (behaviour.md §5.5), written
 * in the same placeholder language admins use, so they can serve as a starting point.
 */
import type { EmailEventName } from '../job.ts';

interface Copy {
  readonly subject: string;
  readonly heading: string;
  /** body sentence; may contain placeholders */
  readonly intro: string;
  /** button label; absent for `verify_otp`, which shows the code instead */
  readonly action?: string;
  readonly expiry: string;
}

// Link lifetimes: behaviour.md §2.1 (30 min; invite_member 72 h). OTP: §4.4 (300 s).
const COPY: Readonly<Record<EmailEventName, Copy>> = {
  basic_auth_signup: {
    subject: 'Please verify your email',
    heading: 'Verify your email address',
    intro: 'Thanks for signing up for {{.organization.name}}. Please confirm your email address to finish creating your account.',
    action: 'Verify email',
    expiry: 'This link expires in 30 minutes.',
  },
  magic_link_login: {
    subject: 'Please verify your email',
    heading: 'Sign in to {{.organization.name}}',
    intro: 'Use the button below to sign in to {{.organization.name}}. No password is needed.',
    action: 'Sign in',
    expiry: 'This link expires in 30 minutes and can be used once.',
  },
  update_email: {
    subject: 'Please verify your email',
    heading: 'Confirm your new email address',
    intro: 'The email address of your {{.organization.name}} account was changed to this address. Please confirm it.',
    action: 'Verify email',
    expiry: 'This link expires in 30 minutes.',
  },
  forgot_password: {
    subject: 'Reset Password',
    heading: 'Reset your password',
    intro: 'We received a request to reset the password of your {{.organization.name}} account.',
    action: 'Reset password',
    expiry: 'This link expires in 30 minutes.',
  },
  invite_member: {
    subject: 'Please accept the invitation',
    heading: 'You are invited to {{.organization.name}}',
    intro: 'You have been invited to join {{.organization.name}}. Accept the invitation to set your password and sign in.',
    action: 'Accept invitation',
    expiry: 'This invitation expires in 72 hours.',
  },
  verify_otp: {
    subject: 'OTP for your multi factor authentication',
    heading: 'Your verification code',
    intro: 'Use this one-time code to finish signing in to {{.organization.name}}:',
    expiry: 'The code expires in 5 minutes.',
  },
};

/** A built-in template set for one event: subject, HTML body and plain-text alternative. */
export interface DefaultTemplate {
  readonly subject: string;
  readonly html: string;
  readonly text: string;
}

/** Rendering choices made before templating, because the language has no conditionals. */
export interface DefaultTemplateOptions {
  /** include the `<img>` of `{{.organization.logo}}` (only when a logo is configured) */
  readonly withLogo: boolean;
  /** greet by `{{.user.given_name}}` (only when the user has one) */
  readonly withName: boolean;
}

const FONT = "font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif";
const BUTTON = 'display:inline-block;background:#2563eb;color:#ffffff;text-decoration:none;'
  + 'font-weight:bold;font-size:15px;padding:12px 24px;border-radius:6px';

const row = (content: string, style = 'font-size:15px;line-height:22px;padding:0 0 16px 0'): string =>
  `<tr><td style="${style}">${content}</td></tr>`;

/**
 * Returns the built-in subject, HTML and text templates for an event (behaviour.md §5.5: logo,
 * greeting, a button to `verification_url`, or the `otp` in bold with a 5-minute expiry).
 */
export function defaultTemplate(event: EmailEventName, options: DefaultTemplateOptions): DefaultTemplate {
  const copy = COPY[event];
  const greeting = options.withName ? 'Hi {{.user.given_name}},' : 'Hello,';
  const rows: string[] = [];
  if (options.withLogo) {
    rows.push(row('<img src="{{.organization.logo}}" alt="{{.organization.name}}" height="48" style="height:48px;border:0">',
      'padding:0 0 24px 0;text-align:center'));
  }
  rows.push(row(copy.heading, 'font-size:22px;font-weight:bold;padding:0 0 16px 0'));
  rows.push(row(greeting));
  rows.push(row(copy.intro));
  const textLines = [greeting, '', copy.intro, ''];
  if (copy.action) {
    rows.push(row(`<a href="{{.verification_url}}" style="${BUTTON}">${copy.action}</a>`, 'padding:8px 0 24px 0;text-align:center'));
    rows.push(row('If the button does not work, copy this link into your browser:<br>'
      + '<a href="{{.verification_url}}" style="color:#2563eb;word-break:break-all">{{.verification_url}}</a>',
    'font-size:13px;line-height:20px;color:#52606d;padding:0 0 16px 0'));
    textLines.push(`${copy.action}: {{.verification_url}}`, '');
  } else {
    rows.push(row('<b>{{.otp}}</b>', 'font-size:30px;letter-spacing:6px;padding:8px 0 24px 0;text-align:center'));
    textLines.push('{{.otp}}', '');
  }
  rows.push(row(copy.expiry));
  rows.push(row('If you did not request this, you can ignore this email.', 'font-size:13px;color:#52606d;padding:0 0 16px 0'));
  textLines.push(copy.expiry, 'If you did not request this, you can ignore this email.', '', '{{.organization.name}}', '');
  const html = '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
    + '<meta name="viewport" content="width=device-width, initial-scale=1">'
    + `<title>${copy.subject}</title></head>\n`
    + `<body style="margin:0;padding:0;background:#f4f5f7;${FONT};color:#1f2933">\n`
    + '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7;padding:24px 0"><tr><td align="center">\n'
    + '<table role="presentation" width="560" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px;padding:32px">\n'
    + rows.join('\n')
    + '\n</table>\n'
    + `<p style="font-size:12px;color:#7b8794;${FONT}">{{.organization.name}}</p>\n`
    + '</td></tr></table>\n</body></html>\n';
  return { subject: copy.subject, html, text: textLines.join('\n') };
}

/** The built-in subject of an event (behaviour.md §5.5). */
export function defaultSubject(event: EmailEventName): string {
  return COPY[event].subject;
}
