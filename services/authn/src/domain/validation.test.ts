import { describe, it, expect } from '@jest/globals';
import { checkAppData, checkPasswordPolicy, normaliseEmail, normaliseList, normalisePhone, optText, requiredRelations } from './validation.ts';
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
  it('bounds text fields, naming the field', () => {
    expect(optText('state', null)).toBeUndefined();
    expect(optText('state', undefined)).toBeUndefined();
    expect(optText('state', ' x ')).toBe(' x ');
    expect(optText('nickname', 'x'.repeat(256))).toHaveLength(256);
    expect(() => optText('nickname', 'x'.repeat(257))).toThrow('nickname must be at most 256 characters');
    expect(() => optText('token', 'x'.repeat(513), 512)).toThrow('token must be at most 512 characters');
  });
  it('normalises roles and scope lists', () => {
    expect(normaliseList('roles', [])).toBeUndefined();
    expect(normaliseList('roles', [' ', ''])).toBeUndefined();
    expect(normaliseList('roles', [' user ', 'editor', 'user'])).toEqual(['user', 'editor']);
    expect(() => normaliseList('roles', ['x'.repeat(257)])).toThrow('roles must be a list of strings');
    expect(() => normaliseList('scope', Array(101).fill('openid'))).toThrow('scope must have at most 100 entries');
  });
  it('bounds app_data and copies it', () => {
    const data = { a: [1] };
    expect(checkAppData(data)).toEqual({ a: [1] });
    expect(checkAppData(data)).not.toBe(data);
    expect(checkAppData(null)).toBeUndefined();
    expect(() => checkAppData({ big: 'x'.repeat(16 * 1024) })).toThrow('app_data too large');
  });
  it('checks required_relations', () => {
    expect(requiredRelations([])).toEqual([]);
    expect(requiredRelations([{ relation: ' viewer ', object: 'doc:1' }])).toEqual([{ relation: 'viewer', object: 'doc:1' }]);
    expect(() => requiredRelations([{ relation: 'viewer', object: null }])).toThrow('each required relation needs relation and object');
    expect(() => requiredRelations([{ relation: ' ', object: 'doc:1' }])).toThrow('each required relation needs relation and object');
    expect(() => requiredRelations(Array(101).fill({ relation: 'r', object: 'o' }))).toThrow('at most 100');
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
