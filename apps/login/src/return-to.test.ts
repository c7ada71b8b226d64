import { describe, expect, it } from '@jest/globals';
import { safeReturnTo } from './return-to.ts';

const O = 'http://localhost:8080';

describe('safeReturnTo (the /authorize contract)', () => {
  it('accepts a same-origin /authorize path with its query', () => {
    expect(safeReturnTo('/authorize?client_id=a&redirect_uri=https%3A%2F%2Frp.example%2Fcb', O, '')).toBe('/authorize?client_id=a&redirect_uri=https%3A%2F%2Frp.example%2Fcb');
    expect(safeReturnTo('/auth/authorize?x=1', O, '/auth')).toBe('/auth/authorize?x=1');
  });

  it('refuses other paths, other origins and redirect tricks', () => {
    for (const bad of [
      null, '', '/app', '/authorizex', '/v1/logout', '/auth/authorize', 'https://evil.example/authorize', '//evil.example/authorize',
      '/\\evil.example/authorize', '\\\\evil.example/authorize', 'javascript:alert(1)', '/authorize\n', '/%2e%2e/authorize/../v1/profile',
    ]) {
      expect(safeReturnTo(bad, O, '')).toBeNull();
    }
    expect(safeReturnTo('/authorize', O, '/auth')).toBeNull();
    expect(safeReturnTo('/authorize/../app', O, '')).toBeNull();
  });
});

describe('safeReturnTo (the SAML IdP sign-on endpoint, issue 20)', () => {
  it('accepts a same-origin /oauth/saml/<org>/idp/sso path with its query', () => {
    expect(safeReturnTo('/oauth/saml/acme/idp/sso?SAMLRequest=abc&RelayState=x', O, '')).toBe('/oauth/saml/acme/idp/sso?SAMLRequest=abc&RelayState=x');
    expect(safeReturnTo('/auth/oauth/saml/acme/idp/sso?sp=urn%3Asp', O, '/auth')).toBe('/auth/oauth/saml/acme/idp/sso?sp=urn%3Asp');
  });

  it('refuses the other SAML paths and traversal out of the endpoint', () => {
    for (const bad of [
      '/oauth/saml/acme/idp/metadata', '/oauth/saml/acme/acs', '/oauth/saml/acme/idp/sso/x', '/oauth/saml/a/b/idp/sso',
      '/oauth/saml/acme/idp/sso/../../../v1/profile', 'https://evil.example/oauth/saml/acme/idp/sso',
    ]) {
      expect(safeReturnTo(bad, O, '')).toBeNull();
    }
    expect(safeReturnTo('/oauth/saml/acme/idp/sso', O, '/auth')).toBeNull();
  });
});

describe('safeReturnTo (the device verification page, RFC 8628, issue 34 §5)', () => {
  it('accepts <base>/app/device with its query, and nothing else under /app', () => {
    expect(safeReturnTo('/app/device?user_code=WDJB-MJHT', O, '')).toBe('/app/device?user_code=WDJB-MJHT');
    expect(safeReturnTo('/auth/app/device', O, '/auth')).toBe('/auth/app/device');
    for (const bad of ['/app/device/x', '/app/devices', '/app/login', '/app/device/../../v1/profile', 'https://evil.example/app/device', '//evil.example/app/device']) {
      expect(safeReturnTo(bad, O, '')).toBeNull();
    }
    expect(safeReturnTo('/app/device', O, '/auth')).toBeNull();
  });
});

describe('safeReturnTo (the account console, issue 33 §2)', () => {
  it('accepts <base>/app/account and no other path like it', () => {
    expect(safeReturnTo('/app/account', O, '')).toBe('/app/account');
    expect(safeReturnTo('/auth/app/account', O, '/auth')).toBe('/auth/app/account');
    for (const bad of ['/app/account/x', '/app/accounts', '/app/account/../../v1/profile', 'https://evil.example/app/account', '//evil.example/app/account']) {
      expect(safeReturnTo(bad, O, '')).toBeNull();
    }
    expect(safeReturnTo('/app/account', O, '/auth')).toBeNull();
  });
});
