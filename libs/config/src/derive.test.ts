/** @module @gatehouse/config/derive.test: derived fields (behaviour.md §1.3, §4.1; spec §1 engine rule), defaults and freezing. */

import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './load.ts';
import { redactConfig } from './redact.ts';
import { BASE, JWT, argvFor, ok } from './test-fixtures.ts';

const SMTP = ['--smtp-host=smtp.example.com', '--smtp-port=587', '--smtp-sender-email=no-reply@example.com'];
const TWILIO = ['--twilio-account-sid=AC1', '--twilio-api-key=SK1', '--twilio-api-secret=secret', '--twilio-sender=+15550000000'];

/** `all` with the given database flags instead of the fixture's sqlite. */
function withDb(...db: string[]) {
  return loadConfig('all', [...BASE, ...JWT, ...db]);
}

describe('fga (spec §1: the engine reuses a SQL main database)', () => {
  it.each([
    ['sqlite', 'sqlite'],
    ['postgres', 'postgres'],
    ['mysql', 'mysql'],
    ['mariadb', 'mysql'],
  ])('runs on the main %s database as %s', (type, store) => {
    const config = withDb(`--database-type=${type}`, '--database-url=db://main').config;
    expect(config?.fga).toEqual({ enabled: true, store, url: 'db://main', sharesMainDatabase: true });
  });
  it('is off over mongodb', () => {
    expect(withDb('--database-type=mongodb', '--database-url=mongodb://db/g').config?.fga)
      .toEqual({ enabled: false, store: null, url: undefined, sharesMainDatabase: false });
  });
  it('points at an OpenFGA server with --fga-store=openfga', () => {
    expect(ok('authz', '--fga-store=openfga', '--fga-store-url=http://fga:8080', '--fga-store-id=01HSTORE', '--fga-store-api-token=tok').fga)
      .toEqual({ enabled: true, store: 'openfga', url: 'http://fga:8080', sharesMainDatabase: false, storeId: '01HSTORE', apiToken: 'tok' });
  });
  it('runs over mongodb when --fga-store and --fga-store-url are set', () => {
    expect(withDb('--database-type=mongodb', '--database-url=mongodb://db/g', '--fga-store=postgres', '--fga-store-url=postgres://fga/x').config?.fga)
      .toEqual({ enabled: true, store: 'postgres', url: 'postgres://fga/x', sharesMainDatabase: false });
  });
  it('can run in memory', () => {
    expect(ok('authz', '--fga-store=memory').fga).toEqual({ enabled: true, store: 'memory', url: undefined, sharesMainDatabase: false });
  });
  it('has no URL to reuse when the main database is given as parts', () => {
    const config = withDb('--database-type=postgres', '--database-host=db', '--database-name=g').config;
    expect(config?.fga).toEqual({ enabled: true, store: 'postgres', url: undefined, sharesMainDatabase: true });
  });
  it('is off on the gateway, which owns no data', () => {
    expect(ok('gateway').fga.enabled).toBe(false);
  });
});

describe('mfa (behaviour.md §4.1)', () => {
  it('offers TOTP and passkeys by default; email and SMS need their providers', () => {
    expect(ok('all').mfa).toEqual({ available: true, enforced: false, totp: true, email: false, sms: false, webauthn: true });
    expect(ok('all', ...SMTP, ...TWILIO).mfa).toEqual({ available: true, enforced: false, totp: true, email: true, sms: true, webauthn: true });
  });
  it('honours each opt-out', () => {
    expect(ok('all', ...SMTP, ...TWILIO, '--disable-totp-login', '--disable-email-otp', '--disable-sms-otp').mfa)
      .toEqual({ available: true, enforced: false, totp: false, email: false, sms: false, webauthn: true });
  });
  it('is unavailable when every method is off', () => {
    expect(ok('all', '--disable-totp-login', '--disable-webauthn-mfa').mfa.available).toBe(false);
  });
  it('is enforced with --enforce-mfa', () => {
    expect(ok('all', '--enforce-mfa').mfa.enforced).toBe(true);
  });
  it('lets --disable-mfa win over --enforce-mfa, with a warning', () => {
    const result = loadConfig('all', argvFor('all', '--enforce-mfa', '--disable-mfa'));
    expect(result.config?.mfa).toEqual({ available: false, enforced: false, totp: false, email: false, sms: false, webauthn: false });
    expect(result.warnings).toContain('--disable-mfa overrides --enforce-mfa: MFA is off');
  });
});

describe('providers and derived defaults (behaviour.md §1.3)', () => {
  it('counts email as configured only with host, port and sender email', () => {
    expect(ok('all', ...SMTP.slice(0, 2)).isEmailConfigured).toBe(false);
    expect(ok('all', ...SMTP).isEmailConfigured).toBe(true);
  });
  it('counts SMS as configured only with all four Twilio flags', () => {
    expect(ok('all', ...TWILIO.slice(1)).isSmsConfigured).toBe(false);
    expect(ok('all', ...TWILIO).isSmsConfigured).toBe(true);
  });
  it('keeps a channel without its provider in the development outbox under --env=development only (issue 33 §4)', () => {
    expect(ok('all').devOutbox).toEqual({ email: false, sms: false });
    expect(ok('all', '--env=development').devOutbox).toEqual({ email: true, sms: true });
    expect(ok('all', '--env=development', ...SMTP).devOutbox).toEqual({ email: false, sms: true });
    expect(ok('all', '--env=development', ...TWILIO).devOutbox).toEqual({ email: true, sms: false });
    expect(ok('all', '--env=development').mfa.email).toBe(true);
    expect(ok('all').mfa.email).toBe(false);
  });
  it('lets the development outbox stand in for SMTP and SMS behind the verification flags, never in production', () => {
    expect(ok('all', '--env=development', '--enable-email-verification', '--enable-phone-verification').enableEmailVerification).toBe(true);
    expect(loadConfig('all', argvFor('all', '--enable-email-verification')).errors)
      .toContain('--enable-email-verification requires SMTP (--smtp-host, --smtp-port, --smtp-sender-email)');
  });
  it('enables a social provider only with both client id and secret', () => {
    const result = loadConfig('all', argvFor('all', '--github-client-id=g', '--github-client-secret=s', '--google-client-id=only-id',
      '--roblox-client-id=r', '--roblox-client-secret=s'));
    expect(result.config?.enabledSocialProviders).toEqual(['github', 'roblox']);
    expect(result.warnings).toContain('--google-client-id and --google-client-secret must both be set; google login stays off');
  });
  it('defaults the sender name to the organization name', () => {
    expect(ok('all', '--organization-name=Acme').smtpSenderName).toBe('Acme');
    expect(ok('all', '--organization-name=Acme', '--smtp-sender-name=Acme Accounts').smtpSenderName).toBe('Acme Accounts');
  });
  it('defaults the reset password page under --url', () => {
    expect(ok('all', '--url=https://example.com/auth/').resetPasswordUrl).toBe('https://example.com/auth/app/reset-password');
    expect(ok('all', '--reset-password-url=https://app.example.com/reset/').resetPasswordUrl).toBe('https://app.example.com/reset');
  });
  it('defaults --url to http://localhost:<http-port> under --env=development, with warnings', () => {
    const argv = [...argvFor('all').filter((a) => !a.startsWith('--url')), '--env=development', '--http-port=3000'];
    const result = loadConfig('all', argv);
    expect(result.config?.url).toBe('http://localhost:3000');
    expect(result.warnings).toEqual(expect.arrayContaining([
      '--env=development is set; do not use it in production',
      'browsers will not store Secure cookies over http',
    ]));
  });
  it('lists the spec defaults', () => {
    const c = ok('all');
    expect(c).toMatchObject({
      command: 'all', env: 'production', httpPort: 8080, grpcPort: 9091, host: '0.0.0.0', metricsPort: 8081,
      metricsHost: '127.0.0.1', logLevel: 'info', accessTokenExpiresIn: 1800, refreshTokenExpiresIn: 2592000,
      sessionExpiresIn: 86400, rateLimitRps: 30, rateLimitBurst: 20, appCookieSameSite: 'none', jwtRoleClaim: 'role',
      organizationName: 'Gatehouse', organizationLogo: '', roles: ['user'], defaultRoles: ['user'], protectedRoles: [],
      enableStrongPassword: true, enableBasicAuthentication: true, enableMobileBasicAuthentication: true, enableSignup: true,
      enableLoginPage: true, enablePlayground: true, enableGraphqlIntrospection: true, enableEmailVerification: false,
      enablePhoneVerification: false, enableMagicLinkLogin: false, enforceMfa: false, appCookieSecure: true,
      adminCookieSecure: true, defaultAuthorizeResponseType: 'token', defaultAuthorizeResponseMode: 'query',
      microsoftTenantId: 'common', trustedProxies: [], redirectUris: [], allowPrivateWebhookTargets: false,
      enableHsts: false, enableOrgDiscovery: false, graphqlMaxDepth: 15, graphqlMaxComplexity: 300, graphqlMaxAliases: 30,
      disableAdminHeaderAuth: false, redisUrl: undefined, natsUrl: undefined, encryptionKey: undefined,
    });
  });
});

describe('warnings (behaviour.md §1.4)', () => {
  it('warns about * origins, a short admin secret and private webhook targets', () => {
    const result = loadConfig('all', argvFor('all', '--allowed-origins=*', '--admin-secret=short', '--allow-private-webhook-targets'));
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([
      '--allowed-origins is *: browsers may make state-changing calls only from the server\'s own origin (--url or the request\'s host), and CORS answers any origin without credentials; list the origins of your apps',
      '--admin-secret is shorter than 32 characters; use a long random value',
      '--allow-private-webhook-targets is on: webhooks and test_endpoint may reach private networks',
    ]);
  });
  it('warns nothing for a clean production start', () => {
    expect(loadConfig('all', argvFor('all')).warnings).toEqual([]);
  });
});

describe('freezing', () => {
  it('freezes the config deeply', () => {
    const config = ok('all');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.roles)).toBe(true);
    expect(Object.isFrozen(config.mfa)).toBe(true);
    expect(() => {
      (config as { httpPort: number }).httpPort = 1;
    }).toThrow(TypeError);
    expect(() => (config.roles as string[]).push('admin')).toThrow(TypeError);
  });
});

describe('redactConfig', () => {
  it('hides every secret that is set and keeps the rest', () => {
    const redacted = redactConfig(ok('all', '--smtp-password=hunter2', '--database-url=postgres://u:pw@db/g', '--database-type=postgres'));
    expect(redacted).toMatchObject({
      adminSecret: '[redacted]', clientSecret: '[redacted]', jwtSecret: '[redacted]', smtpPassword: '[redacted]',
      databaseUrl: '[redacted]', clientId: 'gatehouse', httpPort: 8080, encryptionKey: undefined,
    });
    expect(JSON.stringify(redacted)).not.toMatch(/hunter2|pw@db|client-secret|jwt-secret|0123456789abcdef/);
  });
  it('hides the OpenFGA API token, also inside the derived fga state', () => {
    const redacted = redactConfig(ok('all', '--fga-store=openfga', '--fga-store-url=http://fga:8080', '--fga-store-api-token=fga-secret-token'));
    expect(redacted).toMatchObject({ fgaStoreApiToken: '[redacted]', fga: { store: 'openfga', apiToken: '[redacted]' } });
    expect(JSON.stringify(redacted)).not.toContain('fga-secret-token');
  });
});
