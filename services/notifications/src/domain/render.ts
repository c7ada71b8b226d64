/**
 * @module @gatehouse/notifications/domain/render
 * The one function through which every email is rendered (behaviour.md §5.5): a stored template
 * when the admin has one (the `override` hook), the built-in template otherwise.
 */
import type { EmailJob } from '../job.ts';
import { defaultTemplate } from './default-templates.ts';
import { escapeHtml, renderTemplate } from './template-engine.ts';

export { validateTemplateSyntax } from './template-engine.ts';

export interface RenderOptions {
  /** `--organization-name` (default `Gatehouse`, behaviour.md §1.3) */
  readonly organizationName: string;
  /** `--organization-logo` URL; empty = no logo */
  readonly organizationLogo: string;
  /** a stored EmailTemplate for the job's event: `subject` and HTML `template` */
  readonly override?: { readonly subject: string; readonly template: string } | undefined;
}

export interface RenderedEmail {
  /** single line; values inserted raw */
  readonly subject: string;
  /** HTML body; values HTML-escaped */
  readonly html: string;
  /** plain-text alternative */
  readonly text: string;
}

const isNonEmptyString = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

/**
 * Renders one email job. Placeholders: `{{.user.<field>}}`, `{{.organization.name}}`,
 * `{{.organization.logo}}`, `{{.verification_url}}`, `{{.otp}}`; unknown paths render as empty;
 * values are HTML-escaped in the body and raw in the subject (line breaks in the subject become
 * spaces so no value can add a header line).
 *
 * @throws AppError `invalid_argument` `unsupported template syntax: <snippet>` when an override
 *   uses anything but placeholders
 */
export function renderEmail(job: EmailJob, options: RenderOptions): RenderedEmail {
  const data: Record<string, unknown> = {
    user: job.user,
    organization: { name: options.organizationName, logo: options.organizationLogo },
    verification_url: job.variables.verification_url,
    otp: job.variables.otp,
  };
  const raw = (v: string): string => v;
  if (options.override) {
    const subject = renderTemplate(options.override.subject, data, raw);
    const html = renderTemplate(options.override.template, data, escapeHtml);
    return { subject: oneLine(subject), html, text: htmlToText(html) };
  }
  const builtIn = defaultTemplate(job.event_name, {
    withLogo: isNonEmptyString(options.organizationLogo),
    withName: isNonEmptyString(job.user['given_name']),
  });
  return {
    subject: oneLine(renderTemplate(builtIn.subject, data, raw)),
    html: renderTemplate(builtIn.html, data, escapeHtml),
    text: renderTemplate(builtIn.text, data, raw),
  };
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').trim();
}

const ENTITIES: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ',
};

/**
 * A plain-text alternative for a stored HTML template: links become `text (url)`, block ends
 * become line breaks, tags are dropped and the common entities decoded.
 */
export function htmlToText(html: string): string {
  return html
    .replace(/<(style|script|head|title)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<a\b[^>]*?href\s*=\s*(["'])(.*?)\1[^>]*>([\s\S]*?)<\/a\s*>/gi,
      (_m, _q: string, href: string, label: string) => {
        const text = label.replace(/<[^>]*>/g, '').trim();
        return text && text !== href ? `${text} (${href})` : href;
      })
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/?(p|div|tr|h[1-6]|li|table)\b[^>]*>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_m, name: string) => ENTITIES[name] ?? '')
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
