/**
 * @module @gatehouse/testing/mime
 * A minimal RFC 5322 / MIME reader for what nodemailer produces: unfolded headers, multipart
 * bodies (RFC 2046), quoted-printable and base64 transfer encodings (RFC 2045 §6) and encoded
 * words in headers (RFC 2047). Enough to assert on received mail; not a general parser.
 */

export interface MimePart {
  /** lower-cased header names; the first occurrence wins */
  readonly headers: ReadonlyMap<string, string>;
  /** decoded body of a leaf part (UTF-8) */
  readonly body: string;
  readonly parts: readonly MimePart[];
}

export interface ParsedMail {
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly messageId: string;
  readonly html: string;
  readonly text: string;
  readonly root: MimePart;
}

function splitHeaderBody(raw: string): [string, string] {
  const i = raw.search(/\r?\n\r?\n/);
  if (i === -1) return [raw, ''];
  const sep = /\r?\n\r?\n/.exec(raw.slice(i))?.[0] ?? '\n\n';
  return [raw.slice(0, i), raw.slice(i + sep.length)];
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  const unfolded = block.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, decodeWords(line.slice(colon + 1).trim()));
  }
  return headers;
}

function decodeQuotedPrintableBytes(text: string, underscoreIsSpace: boolean): Buffer {
  const bytes: number[] = [];
  const src = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(src.slice(i + 1, i + 3))) {
      bytes.push(parseInt(src.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '_' && underscoreIsSpace) {
      bytes.push(0x20);
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/** RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `=?UTF-8?B?...?=`); whitespace between words is dropped. */
export function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset: string, enc: string, data: string) =>
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintableBytes(data, true).toString('utf8'));
}

function param(headerValue: string | undefined, name: string): string | undefined {
  if (!headerValue) return undefined;
  const m = new RegExp(`;\\s*${name}=("([^"]*)"|[^;\\s]+)`, 'i').exec(headerValue);
  return m ? (m[2] ?? m[1]) : undefined;
}

function decodeBody(body: string, encoding: string | undefined): string {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return decodeQuotedPrintableBytes(body, false).toString('utf8');
    default:
      return body;
  }
}

/** Parses one entity (message or body part). */
export function parsePart(raw: string): MimePart {
  const [headerBlock, body] = splitHeaderBody(raw);
  const headers = parseHeaders(headerBlock);
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /^multipart\//i.test(type) ? param(type, 'boundary') : undefined;
  if (!boundary) {
    return { headers, body: decodeBody(body, headers.get('content-transfer-encoding')), parts: [] };
  }
  const delimiter = `--${boundary}`;
  const chunks = body.split(delimiter).slice(1); // drop the preamble
  const parts: MimePart[] = [];
  for (const chunk of chunks) {
    if (chunk.startsWith('--')) break; // close delimiter
    parts.push(parsePart(chunk.replace(/^\r?\n/, '').replace(/\r?\n$/, '')));
  }
  return { headers, body: '', parts };
}

function findLeaf(part: MimePart, mime: string): MimePart | undefined {
  const type = (part.headers.get('content-type') ?? 'text/plain').toLowerCase();
  if (part.parts.length === 0) return type.startsWith(mime) ? part : undefined;
  for (const child of part.parts) {
    const hit = findLeaf(child, mime);
    if (hit) return hit;
  }
  return undefined;
}

/** Parses a whole message as received over SMTP. */
export function parseMail(raw: string): ParsedMail {
  const root = parsePart(raw);
  return {
    from: root.headers.get('from') ?? '',
    to: root.headers.get('to') ?? '',
    subject: root.headers.get('subject') ?? '',
    messageId: root.headers.get('message-id') ?? '',
    html: findLeaf(root, 'text/html')?.body ?? '',
    text: findLeaf(root, 'text/plain')?.body ?? '',
    root,
  };
}
