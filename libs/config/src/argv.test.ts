/** @module @gatehouse/config/argv.test: flag syntax, removed and deprecated flags, unknown flags (spec §1 rule 6, behaviour.md §1.4). */

import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './load.ts';
import { argvFor, load, ok } from './test-fixtures.ts';

describe('removed and unsupported flags', () => {
  it.each(['--enable-mfa', '--enable-totp-login', '--enable-email-otp', '--enable-sms-otp'])('refuses %s', (flag) => {
    expect(load(flag).errors).toEqual([
      `unknown flag ${flag}: removed; MFA methods are on by default, use --disable-mfa or --disable-<method>`,
    ]);
  });
  it('refuses a removed flag written with a value, without a second error for the value', () => {
    expect(load('--enable-totp-login', 'true').errors).toHaveLength(1);
    expect(load('--enable-sms-otp=false').errors).toHaveLength(1);
  });
  it.each([['--env_file=.env'], ['--env_file', '.env'], ['--env-file=/etc/gatehouse.env']])('refuses %j', (...argv) => {
    expect(load(...argv).errors).toEqual(['--env_file is not supported; pass configuration as flags']);
  });
});

describe('deprecated underscore aliases', () => {
  it('accepts each alias with a warning and applies its value', () => {
    const result = loadConfig('all', [
      ...argvFor('all').filter((a) => !a.startsWith('--database-')),
      '--database_type=postgres', '--database_url', 'postgres://db/gatehouse', '--redis_url=redis://cache:6379', '--log_level', 'debug',
    ]);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual(expect.arrayContaining([
      '--database_url is deprecated; use --database-url',
      '--database_type is deprecated; use --database-type',
      '--redis_url is deprecated; use --redis-url',
      '--log_level is deprecated; use --log-level',
    ]));
    expect(result.config).toMatchObject({
      databaseType: 'postgres', databaseUrl: 'postgres://db/gatehouse', redisUrl: 'redis://cache:6379', logLevel: 'debug',
    });
  });
  it('validates an aliased value like the real flag', () => {
    expect(load('--log_level=trace').errors).toEqual(['unsupported --log-level: trace']);
  });
});

describe('unknown flags', () => {
  it('names the flag in one clear line', () => {
    expect(load('--x').errors).toEqual(['unknown flag --x']);
  });
  it('does not report the value of an unknown flag as a second problem', () => {
    expect(load('--database-max-connections', '10').errors).toEqual(['unknown flag --database-max-connections']);
  });
  it('refuses a flag another command owns', () => {
    expect(loadConfig('gateway', [...argvFor('gateway'), '--database-url=x.db']).errors).toEqual([
      'unknown flag --database-url: the gateway command does not use it',
    ]);
    expect(load('--authn-address=authn:9091').errors).toEqual(['unknown flag --authn-address: the all command does not use it']);
  });
  it('refuses positional arguments and single-dash flags', () => {
    expect(load('serve').errors).toEqual(['unexpected argument "serve"']);
    expect(load('-v').errors).toEqual(['unknown flag -v']);
  });
});

describe('flag syntax', () => {
  it.each([
    [['--enable-signup'], true],
    [['--enable-signup=true'], true],
    [['--enable-signup=false'], false],
    [['--enable-signup', 'false'], false],
    [['--enable-signup', 'true'], true],
    [['--enable-signup=FALSE'], false],
    [[], true],
  ])('reads the boolean %j as %s', (extra, expected) => {
    expect(ok('all', '--enable-signup=false', ...extra).enableSignup).toBe(extra.length === 0 ? false : expected);
  });
  it('reads a bare boolean followed by another flag as true', () => {
    const config = ok('all', '--enable-hsts', '--http-port', '9000');
    expect(config.enableHsts).toBe(true);
    expect(config.httpPort).toBe(9000);
  });
  it('refuses a boolean that is not true or false', () => {
    expect(load('--enable-signup', 'yes').errors).toEqual(['--enable-signup must be true or false, got "yes"']);
  });
  it('accepts --flag value and --flag=value alike', () => {
    expect(ok('all', '--organization-name', 'Acme Inc').organizationName).toBe('Acme Inc');
    expect(ok('all', '--organization-name=Acme=Inc').organizationName).toBe('Acme=Inc');
  });
  it('refuses a value flag without a value', () => {
    expect(load('--http-port').errors).toEqual(['--http-port requires a value']);
    expect(load('--http-port', '--grpc-port=1').errors).toEqual(['--http-port requires a value']);
  });
  it('lets the last occurrence win and treats an empty value as the default', () => {
    expect(ok('all', '--http-port=1', '--http-port=2').httpPort).toBe(2);
    expect(ok('all', '--http-port=1', '--http-port=').httpPort).toBe(8080);
  });
  it('parses comma lists, trimming entries and dropping empty ones', () => {
    const config = ok('all', '--roles= user , admin,,editor', '--default-roles=user', '--protected-roles=admin');
    expect(config.roles).toEqual(['user', 'admin', 'editor']);
    expect(config.protectedRoles).toEqual(['admin']);
    expect(config.googleScopes).toEqual(['openid', 'profile', 'email']);
    expect(ok('all', '--github-scopes=read:user').githubScopes).toEqual(['read:user']);
  });
  it('parses numbers and refuses non-numbers', () => {
    expect(ok('all', '--access-token-expires-in=60', '--rate-limit-rps=0').accessTokenExpiresIn).toBe(60);
    expect(load('--access-token-expires-in=0').errors).toEqual(['--access-token-expires-in must be a positive whole number, got "0"']);
    expect(load('--rate-limit-burst=-1').errors).toEqual(['--rate-limit-burst must be a non-negative whole number, got "-1"']);
    expect(load('--rate-limit-burst=1.5').errors).toEqual(['--rate-limit-burst must be a non-negative whole number, got "1.5"']);
  });
  it('refuses an unknown SameSite mode', () => {
    expect(load('--app-cookie-same-site=relaxed').errors).toEqual(['--app-cookie-same-site must be one of none, lax, strict, got "relaxed"']);
    expect(ok('all', '--app-cookie-same-site=Lax').appCookieSameSite).toBe('lax');
  });
});

describe('--help', () => {
  it('returns the help text instead of a config, even beside bad flags', () => {
    const result = loadConfig('authz', ['--bogus', '--help']);
    expect(result.config).toBeUndefined();
    expect(result.errors).toEqual([]);
    expect(result.help).toContain('Usage: gatehouse authz');
    expect(loadConfig('authz', ['-h']).help).toBe(result.help);
  });
});
