import { describe, it, expect } from '@jest/globals';
import { checkPasswordPolicy, normaliseEmail, normalisePhone, optAppData, parseRequiredRelations } from './validation.ts';
import { checkRedirectUri } from './redirect.ts';
import { testOptions } from '../fixture.ts';

describe('shared input rules (behaviour.md §3.1)', () => {
  it.each(['a@example.com', 'first.last+tag@sub.example.co.uk', "o'brien@example.ie", 'x_y-z@e-x.io'])('accepts %s', (e) => {
    expect(normaliseEmail(` ${e.toUpperCase()} `)).toBe(e.toLowerCase());
  });
  it.each(['', 'plain', '@example.com', 'a@', 'a@localhost', 'a..b@example.com', '.a@example.com', 'a@-x.com', '"q"@example.com', 'a@[127.0.0.1]', `${'a'.repeat(65)}@example.com`, `a@${'b'.repeat(320)}.com`])('refuses %j', (e) => {
    expect(() => normaliseEmail(e)).toThrow('invalid email address');
  });
  it('validates phone numbers after trimming', () => {
    expect(normalisePhone(' +12025550123 ')).toBe('+12025550123');
    expect(normalisePhone('4915112345678')).toBe('4915112345678');
    for (const p of ['+1202555', '+1234567890123456', '+1 202 555 0123', '++12025550123']) expect(() => normalisePhone(p)).toThrow('invalid phone number');
  });
  it('counts password length in characters, 8 to 128', () => {
    expect(() => checkPasswordPolicy('Aa1!aaa', true)).toThrow('password must be between 8 and 128 characters');
    expect(() => checkPasswordPolicy(`Aa1!${'a'.repeat(125)}`, true)).toThrow('password must be between 8 and 128 characters');
    expect(() => checkPasswordPolicy(`Aa1!${'a'.repeat(124)}`, true)).not.toThrow();
    expect(() => checkPasswordPolicy('Aa1 aaaa', true)).not.toThrow();
    expect(() => checkPasswordPolicy('Aa1éaaaa', true)).not.toThrow();
    expect(() => checkPasswordPolicy('ÄÖÜ1aaaa!', true)).toThrow(/password is not valid/);
    expect(() => checkPasswordPolicy('😀😀😀😀😀😀😀', false)).toThrow('password must be between 8 and 128 characters');
  });
  it('bounds app_data', () => {
    expect(optAppData({ app_data: { a: [1] } })).toEqual({ a: [1] });
    expect(optAppData({ app_data: null })).toBeUndefined();
    expect(() => optAppData({ app_data: 3 })).toThrow('malformed app_data');
  });
  it('parses required_relations', () => {
    expect(parseRequiredRelations({ required_relations: [{ relation: 'viewer', object: 'doc:1' }] })).toEqual([{ relation: 'viewer', object: 'doc:1' }]);
    expect(() => parseRequiredRelations({ required_relations: [{ relation: 'viewer' }] })).toThrow('each required relation needs relation and object');
    expect(() => parseRequiredRelations({ required_relations: 'x' })).toThrow('required_relations must be a list');
    expect(() => parseRequiredRelations({ required_relations: Array(101).fill({ relation: 'r', object: 'o' }) })).toThrow('at most 100');
  });
  it('applies the redirect_uri rule', () => {
    const o = testOptions({ redirectUris: ['myapp://cb', 'https://app.example.org/cb'], allowedOrigins: ['https://spa.example.net', '*.example.io', 'localhost:3000'] });
    expect(checkRedirectUri(o, undefined)).toBe('https://auth.example.com/app');
    expect(checkRedirectUri(o, 'https://app.example.org/cb')).toBe('https://app.example.org/cb');
    expect(checkRedirectUri(o, 'https://spa.example.net/x?y=1')).toBe('https://spa.example.net/x?y=1');
    expect(checkRedirectUri(o, 'https://a.example.io/')).toBe('https://a.example.io/');
    expect(checkRedirectUri(o, 'http://localhost:3000/cb')).toBe('http://localhost:3000/cb');
    for (const bad of ['https://example.io/', 'http://spa.example.net/', 'myapp://cb', 'https://evil.com', 'not a url']) expect(() => checkRedirectUri(o, bad)).toThrow('invalid redirect URI');
    const star = testOptions();
    expect(checkRedirectUri(star, 'https://auth.example.com/app/cb')).toBe('https://auth.example.com/app/cb');
    expect(() => checkRedirectUri(star, 'https://other.example.com/')).toThrow('invalid redirect URI');
  });
});
