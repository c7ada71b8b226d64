/** @module render.test: built-in templates, placeholder rendering and syntax validation (behaviour.md §5.5). */
import { describe, it, expect } from '@jest/globals';
import { AppError } from '@gatehouse/errors';
import { EMAIL_EVENTS, type EmailEventName, type EmailJob } from '../job.ts';
import { htmlToText, renderEmail, validateTemplateSyntax } from './render.ts';

const ORG = { organizationName: 'Acme & Co', organizationLogo: 'https://cdn.acme.test/logo.png?size=2&v=1' };
const URL = 'https://auth.acme.test/verify_email?token=tok123&redirect_uri=https%3A%2F%2Fapp.acme.test';

function job(event: EmailEventName, user: Record<string, unknown> = { id: 'u1', email: 'ann@acme.test', given_name: 'Ann' }): EmailJob {
  return {
    event_name: event,
    to: 'ann@acme.test',
    user,
    variables: event === 'verify_otp' ? { otp: 'K7QH2M' } : { verification_url: URL },
  };
}

const SUBJECTS: Record<EmailEventName, string> = {
  basic_auth_signup: 'Please verify your email',
  magic_link_login: 'Please verify your email',
  update_email: 'Please verify your email',
  forgot_password: 'Reset Password',
  invite_member: 'Please accept the invitation',
  verify_otp: 'OTP for your multi factor authentication',
};

describe('renderEmail built-in templates', () => {
  it.each(EMAIL_EVENTS)('%s: built-in subject, org name, logo, greeting and link or OTP in html and text', (event) => {
    const out = renderEmail(job(event), ORG);
    expect(out.subject).toBe(SUBJECTS[event]);
    expect(out.html).toContain('Acme &amp; Co');
    expect(out.html).not.toContain('Acme & Co');
    expect(out.html).toContain('<img src="https://cdn.acme.test/logo.png?size=2&amp;v=1"');
    expect(out.html).toContain('Hi Ann,');
    expect(out.text).toContain('Acme & Co');
    expect(out.text).toContain('Hi Ann,');
    expect(out.html).not.toContain('{{');
    expect(out.text).not.toContain('{{');
    if (event === 'verify_otp') {
      expect(out.html).toContain('<b>K7QH2M</b>');
      expect(out.html).toContain('expires in 5 minutes');
      expect(out.text).toContain('K7QH2M');
      expect(out.text).toContain('expires in 5 minutes');
    } else {
      const escaped = URL.replace(/&/g, '&amp;');
      expect(out.html).toContain(`<a href="${escaped}"`);
      expect(out.text).toContain(URL);
    }
  });

  it('states the link lifetimes of behaviour.md §2.1', () => {
    expect(renderEmail(job('forgot_password'), ORG).text).toContain('30 minutes');
    expect(renderEmail(job('invite_member'), ORG).text).toContain('72 hours');
  });

  it('omits the logo when --organization-logo is empty and greets without a name when there is none', () => {
    const out = renderEmail(job('basic_auth_signup', { id: 'u1', email: 'x@y.test', given_name: null }), {
      organizationName: 'Gatehouse', organizationLogo: '',
    });
    expect(out.html).not.toContain('<img');
    expect(out.html).toContain('Hello,');
    expect(out.html).not.toContain('Hi ,');
  });

  it('escapes user values in the html body', () => {
    const out = renderEmail(job('magic_link_login', { given_name: '<script>alert("x")</script>' }), ORG);
    expect(out.html).toContain('Hi &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;,');
    expect(out.html).not.toContain('<script>');
    expect(out.text).toContain('Hi <script>alert("x")</script>,');
  });
});

describe('renderEmail with a stored template (override)', () => {
  const user = { id: 'u1', email: 'ann@acme.test', given_name: 'Ann <A&B>', roles: ['user', 'admin'], email_verified: false, app_data: { plan: 'pro' } };

  it('inserts values raw in the subject and escaped in the body; spaces inside braces are accepted', () => {
    const out = renderEmail(job('forgot_password', user), {
      ...ORG,
      override: {
        subject: 'Reset for {{ .user.given_name }} at {{.organization.name}}',
        template: '<p>Hello {{.user.given_name}}</p><a href="{{ .verification_url }}">Reset</a><p>{{.user.roles}} {{.user.email_verified}} {{.user.app_data.plan}}</p>',
      },
    });
    expect(out.subject).toBe('Reset for Ann <A&B> at Acme & Co');
    expect(out.html).toBe(`<p>Hello Ann &lt;A&amp;B&gt;</p><a href="${URL.replace(/&/g, '&amp;')}">Reset</a><p>user,admin false pro</p>`);
    expect(out.text).toBe(`Hello Ann <A&B>\nReset (${URL})\nuser,admin false pro`);
  });

  it('renders unknown paths, missing fields and prototype properties as empty', () => {
    const out = renderEmail(job('verify_otp', user), {
      ...ORG,
      override: {
        subject: '[{{.nope}}][{{.user.nickname}}][{{.user.constructor}}]',
        template: '[{{.organization.nope.deeper}}][{{.verification_url}}][{{.user.email.length}}][{{.otp}}]',
      },
    });
    expect(out.subject).toBe('[][][]');
    expect(out.html).toBe('[][][][K7QH2M]');
  });

  it('keeps the subject on one line whatever the values contain', () => {
    const out = renderEmail(job('verify_otp', { given_name: 'Ann\r\nBcc: evil@x.test' }), {
      ...ORG, override: { subject: 'Code for {{.user.given_name}}', template: 'x' },
    });
    expect(out.subject).toBe('Code for Ann Bcc: evil@x.test');
  });

  it('rejects an override with unsupported syntax', () => {
    expect(() => renderEmail(job('verify_otp'), { ...ORG, override: { subject: 's', template: '{{if .otp}}x{{end}}' } }))
      .toThrow('unsupported template syntax: {{if .otp}}');
  });
});

describe('validateTemplateSyntax', () => {
  it.each([
    'plain text without placeholders',
    '{{.user.email}} {{ .organization.name }} {{.verification_url}}{{.otp}}',
    'single { braces } and }} closers alone',
  ])('accepts %j', (template) => {
    expect(() => validateTemplateSyntax(template)).not.toThrow();
  });

  it.each([
    ['{{if .otp}}yes{{end}}', '{{if .otp}}'],
    ['Hi {{.user.email | html}}', '{{.user.email | html}}'],
    ['{{ range .user.roles }}', '{{ range .user.roles }}'],
    ['{{/* comment */}}', '{{/* comment */}}'],
    ['{{- .otp -}}', '{{- .otp -}}'],
    ['{{user.email}}', '{{user.email}}'],
    ['{{.}}', '{{.}}'],
    ['{{ .user..email }}', '{{ .user..email }}'],
    ['open {{.otp', '{{.otp'],
  ])('rejects %j with invalid_argument naming %j', (template, snippet) => {
    let thrown: unknown;
    try {
      validateTemplateSyntax(template);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe('invalid_argument');
    expect((thrown as AppError).message).toBe(`unsupported template syntax: ${snippet}`);
  });

  it('cuts long snippets at 60 characters', () => {
    const long = `{{ call ${'x'.repeat(100)} }}`;
    expect(() => validateTemplateSyntax(long)).toThrow(`unsupported template syntax: ${long.slice(0, 60)}…`);
  });
});

describe('htmlToText', () => {
  it('turns links, breaks and blocks into text and decodes entities', () => {
    expect(htmlToText('<html><head><title>T</title><style>p{}</style></head><body><h1>Hi</h1><p>a&amp;b<br>c</p><a href="https://x.test/?a=1&amp;b=2">https://x.test/?a=1&amp;b=2</a></body></html>'))
      .toBe('Hi\n\na&b\nc\nhttps://x.test/?a=1&b=2');
  });
});
