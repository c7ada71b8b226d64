/** The process logger (STYLE §6; issue 15 logs): one JSON object per line, ISO-8601 time, secrets redacted. */
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger } from './index.ts';

function capture(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
  return { stream, lines: () => chunks.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('createLogger', () => {
  it('writes one JSON object per line with an ISO-8601 time and the level as a word', () => {
    const out = capture();
    createLogger('info', out.stream).child({ service: 'authz' }).info({ store: null }, 'authz started');
    const [line] = out.lines();
    expect(line).toMatchObject({ level: 'info', service: 'authz', store: null, msg: 'authz started' });
    expect(line!.time).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/));
  });

  it('redacts credentials wherever they appear in a line', () => {
    const out = capture();
    createLogger('info', out.stream).info({ headers: { authorization: 'Bearer x', cookie: 'cookie_session=y' }, password: 'p' }, 'request');
    expect(out.lines()[0]).toMatchObject({ headers: { authorization: '[redacted]', cookie: '[redacted]' }, password: '[redacted]' });
  });
});

describe('createLogger pretty format (--log-format=pretty)', () => {
  it('writes readable lines, not JSON, with the level word, the message and the fields, still redacted', () => {
    const chunks: string[] = [];
    const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
    createLogger('info', stream, 'pretty').child({ service: 'authn' }).info({ route: '/v1/login', password: 'p' }, 'request');
    const text = chunks.join('');
    expect(() => JSON.parse(text.trim())).toThrow();
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request \{.*\}\n$/);
    expect(text.trim().split('\n')).toHaveLength(1);
    expect(text).toContain('"service":"authn"');
    expect(text).toContain('"route":"/v1/login"');
    expect(text).toContain('"password":"[redacted]"');
    expect(text).not.toContain('\u001b['); // no colour codes when writing to a stream
  });

  it('honours the level', () => {
    const chunks: string[] = [];
    const stream = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done(); } });
    const logger = createLogger('warn', stream, 'pretty');
    logger.info('hidden');
    logger.warn('shown');
    expect(chunks.join('')).toMatch(/WARN.*shown/);
    expect(chunks.join('')).not.toContain('hidden');
  });
});
