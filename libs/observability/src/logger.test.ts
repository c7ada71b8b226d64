/** The process logger (STYLE §6; issue 15 logs): one JSON object per line, ISO-8601 time, secrets redacted. */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createLogger } from './index.ts';

const INDEX = fileURLToPath(new URL('./index.ts', import.meta.url));

/**
 * Runs `body` in a fresh Node process with `createLogger` imported (stdout a pipe, as under a container
 * runtime); resolves with the stdout lines and when each arrived (ms since spawn).
 */
function runLogging(body: string): Promise<Array<{ line: Record<string, unknown>; atMs: number }>> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', `const { createLogger } = await import(${JSON.stringify(INDEX)});\n${body}`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const t0 = performance.now();
  const got: Array<{ line: Record<string, unknown>; atMs: number }> = [];
  let partial = '';
  child.stdout.on('data', (c: Buffer) => {
    const parts = (partial + c.toString()).split('\n');
    partial = parts.pop()!;
    for (const p of parts) got.push({ line: JSON.parse(p) as Record<string, unknown>, atMs: performance.now() - t0 });
  });
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(got) : reject(new Error(`exit ${code}`)))));
}

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

describe('createLogger on stdout (lines written in batches, issue 38 §4)', () => {
  it('writes every line logged before process.exit', async () => {
    const got = await runLogging(`const log = createLogger('info');
for (let i = 0; i < 500; i++) log.info({ i }, 'request');
log.error('FATAL: going down');
process.exit(1 - 1);`);
    expect(got.map((g) => g.line.i ?? g.line.msg)).toEqual([...Array.from({ length: 500 }, (_, i) => i), 'FATAL: going down']);
  }, 30_000);

  it('writes the lines still queued when the process ends on its own (no exit call)', async () => {
    const got = await runLogging(`const log = createLogger('info');
for (let i = 0; i < 3; i++) log.info({ i, text: 'é "quoted" \\u0000' }, 'request');`);
    expect(got.map((g) => g.line.i)).toEqual([0, 1, 2]);
    expect(got[0]!.line.text).toBe('é "quoted" \u0000');
  }, 30_000);

  it('writes a lone line within the flush interval, while the process keeps running', async () => {
    const got = await runLogging(`const log = createLogger('info');
const t0 = performance.now();
log.info('one line');
setTimeout(() => log.info({ elapsed: performance.now() - t0 }, 'still running'), 3000);
setTimeout(() => process.exit(0), 3100);`);
    expect(got.map((g) => g.line.msg)).toEqual(['one line', 'still running']);
    // the first line reaches stdout long before the second is logged (3 s later), not at exit: it waits
    // for the 250 ms flush (1.5 s allowed here for a loaded machine)
    expect(got[0]!.atMs).toBeLessThan(got[1]!.atMs - 1500);
  }, 30_000);
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
