import { describe, it, expect } from '@jest/globals';
import { compileOriginPolicy, formatOrigin, isListedOrigin, parseOrigin } from './origins.ts';

const listed = (entries: string[], origin: string): boolean => {
  const o = parseOrigin(origin);
  if (!o) throw new Error(`unparseable ${origin}`);
  return isListedOrigin(compileOriginPolicy(entries), o);
};

describe('parseOrigin', () => {
  it('normalises case and default ports, and keeps only scheme://host[:port]', () => {
    expect(formatOrigin(parseOrigin('HTTPS://App.Example.com:443/path?q')!)).toBe('https://app.example.com');
    expect(formatOrigin(parseOrigin('http://localhost:3000')!)).toBe('http://localhost:3000');
    expect(formatOrigin(parseOrigin('http://[::1]:8080')!)).toBe('http://[::1]:8080');
  });
  it('treats null, empty and malformed values as no origin', () => {
    for (const v of [undefined, '', 'null', 'not a url', 'file:///etc/passwd', 'about:blank']) {
      expect(parseOrigin(v)).toBeUndefined();
    }
  });
});

describe('compileOriginPolicy / isListedOrigin (behaviour.md §2.5)', () => {
  it('treats an empty list or one containing * as any-origin', () => {
    expect(compileOriginPolicy([]).any).toBe(true);
    expect(compileOriginPolicy(['https://a.example', '*']).any).toBe(true);
    expect(listed(['*'], 'https://a.example')).toBe(false); // * is never an explicit listing
  });
  it('with a scheme matches scheme, host and port', () => {
    expect(listed(['https://a.example'], 'https://a.example:443')).toBe(true);
    expect(listed(['https://a.example:443'], 'https://a.example')).toBe(true);
    expect(listed(['https://a.example/'], 'https://a.example')).toBe(true);
    expect(listed(['https://a.example'], 'http://a.example')).toBe(false);
    expect(listed(['https://a.example'], 'https://a.example:8443')).toBe(false);
  });
  it('without a scheme matches host[:port] under any scheme', () => {
    expect(listed(['a.example'], 'http://a.example')).toBe(true);
    expect(listed(['a.example'], 'https://a.example')).toBe(true);
    expect(listed(['a.example'], 'https://a.example:8443')).toBe(false);
    expect(listed(['a.example:443'], 'https://a.example')).toBe(true);
    expect(listed(['localhost:3000'], 'http://localhost:3000')).toBe(true);
  });
  it('*.example.com matches subdomains but not the apex or lookalikes', () => {
    expect(listed(['*.example.com'], 'https://x.example.com')).toBe(true);
    expect(listed(['https://*.example.com'], 'https://x.y.example.com')).toBe(true);
    expect(listed(['https://*.example.com'], 'http://x.example.com')).toBe(false);
    expect(listed(['*.example.com'], 'https://example.com')).toBe(false);
    expect(listed(['*.example.com'], 'https://badexample.com')).toBe(false);
  });
  it('is case-insensitive', () => {
    expect(listed(['HTTPS://A.Example'], 'https://a.EXAMPLE')).toBe(true);
  });
});
