/**
 * @module dashboard/preview
 * The email template preview: the server's placeholder language (`{{.a.b}}`, spaces allowed inside
 * the braces; an unknown path renders as empty; values HTML-escaped in the body, raw in the subject)
 * applied to sample values, and the rendered HTML made safe to show inside the console: parsed by
 * `DOMParser` (which runs no script), then only plain formatting elements and `href`/`src`/`alt`
 * attributes are kept. Inline styles are dropped because the console's CSP allows none; the layout
 * the mail client shows may differ, the text and placeholders are what the preview is for.
 */

const PLACEHOLDER = /\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}/g;

/** The sample values a preview fills in, for every event's variables and the user and organization. */
export const SAMPLE = {
  user: { email: 'ada@example.com', given_name: 'Ada', family_name: 'Lovelace', nickname: 'ada', phone_number: '+15555550100' },
  organization: { name: 'Gatehouse', logo: '' },
  verification_url: 'https://auth.example.com/verify_email?token=sample',
  otp: '123456',
} as const;

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);

function lookup(data: unknown, path: string): string {
  let cur: unknown = data;
  for (const key of path.split('.')) {
    if (typeof cur !== 'object' || cur === null || !Object.hasOwn(cur, key)) return '';
    cur = (cur as Record<string, unknown>)[key];
  }
  return typeof cur === 'string' || typeof cur === 'number' || typeof cur === 'boolean' ? String(cur) : '';
}

/**
 * Fills a template's placeholders with {@link SAMPLE}.
 * @param html true for a body (values HTML-escaped), false for a subject (values raw)
 */
export function fill(template: string, html: boolean): string {
  return template.replace(PLACEHOLDER, (_m, path: string) => (html ? escapeHtml(lookup(SAMPLE, path)) : lookup(SAMPLE, path)));
}

/** The placeholder paths a template uses, in order, without repeats. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

const KEEP = new Set(['A', 'B', 'BLOCKQUOTE', 'BR', 'CENTER', 'CODE', 'DIV', 'EM', 'H1', 'H2', 'H3', 'H4', 'HR', 'I', 'IMG', 'LI', 'OL', 'P', 'PRE', 'SMALL', 'SPAN', 'STRONG', 'TABLE', 'TBODY', 'TD', 'TH', 'THEAD', 'TR', 'U', 'UL']);
const DROP = new Set(['SCRIPT', 'STYLE', 'IFRAME', 'OBJECT', 'EMBED', 'LINK', 'META', 'TITLE', 'HEAD', 'FORM', 'INPUT', 'BUTTON', 'TEXTAREA', 'SELECT', 'SVG', 'MATH']);

/** Copies the safe part of `from` into `to` (elements of {@link KEEP}; the text of unknown ones). */
function copySafe(from: Node, to: Node, doc: Document): void {
  for (const child of Array.from(from.childNodes)) {
    if (child.nodeType === Node.TEXT_NODE) {
      to.appendChild(doc.createTextNode(child.textContent ?? ''));
    } else if (child.nodeType === Node.ELEMENT_NODE) {
      const el = child as Element;
      if (DROP.has(el.tagName)) continue;
      if (!KEEP.has(el.tagName)) {
        copySafe(el, to, doc);
        continue;
      }
      const copy = doc.createElement(el.tagName.toLowerCase());
      const href = el.getAttribute('href');
      if (el.tagName === 'A' && href && /^(https?:|mailto:)/i.test(href)) copy.setAttribute('href', href);
      const src = el.getAttribute('src');
      if (el.tagName === 'IMG' && src && /^data:image\//i.test(src)) copy.setAttribute('src', src);
      const alt = el.getAttribute('alt');
      if (alt !== null) copy.setAttribute('alt', alt);
      if (el.tagName === 'IMG' && !copy.hasAttribute('src')) {
        to.appendChild(doc.createTextNode(alt ? `[${alt}]` : '[image]'));
        continue;
      }
      copySafe(el, copy, doc);
      to.appendChild(copy);
    }
  }
}

/** Renders a template body with {@link SAMPLE} into `target`, replacing its content, with the safe elements only. */
export function renderPreview(template: string, target: HTMLElement): void {
  // the parsed document takes the console's CSP: style attributes and elements are cut from the text
  // first, so parsing reports no violation (they would be dropped below anyway)
  const html = fill(template, true)
    .replace(/<style\b[\s\S]*?(<\/style\s*>|$)/gi, '')
    .replace(/\sstyle\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi, '');
  const parsed = new DOMParser().parseFromString(html, 'text/html');
  target.replaceChildren();
  copySafe(parsed.body, target, target.ownerDocument);
}
