/** @module @gatehouse/config/validate.test: one test per fatal rule of behaviour.md §1.4, asserting the exact message. */

import { describe, expect, it } from '@jest/globals';
import { PUBLIC_API_NAMES } from '@gatehouse/contracts/service-names';
import { CALLERS } from './commands.ts';
import { loadConfig } from './load.ts';
import { BASE, DB, JWT, argvFor, load, ok } from './test-fixtures.ts';

/** argv without the flags named (by prefix, e.g. `--admin-secret`). */
function without(argv: readonly string[], ...flags: string[]): string[] {
  return argv.filter((a) => !flags.some((f) => a === f || a.startsWith(`${f}=`)));
}

describe('required flags (spec §1 rules 2-3)', () => {
  it.each([
    ['missing', without(argvFor('all'), '--admin-secret')],
    ['empty', [...argvFor('all'), '--admin-secret=']],
    ['blank after trimming', [...argvFor('all'), '--admin-secret=   ']],
  ])('refuses an admin secret that is %s', (_, argv) => {
    expect(loadConfig('all', argv).errors).toEqual(['--admin-secret is required and must not be empty']);
  });

  it.each(CALLERS)(
    'requires --admin-secret, --client-id and --client-secret for %s', (command) => {
      const errors = loadConfig(command, without(argvFor(command), '--admin-secret', '--client-id', '--client-secret')).errors;
      expect(errors).toEqual([
        '--admin-secret is required and must not be empty', '--client-id is required', '--client-secret is required',
      ]);
    });
});

describe('database (spec §1 rule 1)', () => {
  it('requires --database-type', () => {
    expect(loadConfig('authn', without(argvFor('authn'), '--database-type')).errors).toEqual(['--database-type is required']);
  });
  it('refuses an unsupported database type', () => {
    expect(load('--database-type=cassandra').errors).toEqual(['unsupported --database-type: cassandra']);
  });
  it.each([
    ['nothing', []],
    ['a host without a name', ['--database-host=db']],
    ['a name without a host', ['--database-name=gatehouse']],
  ])('requires a connection when given %s', (_, extra) => {
    const argv = [...without(argvFor('all'), '--database-url'), ...extra];
    expect(loadConfig('all', argv).errors).toEqual([
      'a database connection is required: set --database-url, or --database-host with --database-name',
    ]);
  });
  it('accepts --database-host with --database-name instead of a URL', () => {
    const argv = [...without(argvFor('all'), '--database-url', '--database-type'), '--database-type', 'postgres',
      '--database-host', 'db', '--database-name', 'gatehouse', '--database-port', '5432'];
    expect(loadConfig('all', argv).config?.databasePort).toBe(5432);
  });
  it('does not ask the gateway for a database', () => {
    expect(loadConfig('gateway', argvFor('gateway')).errors).toEqual([]);
  });
});

describe('JWT (spec §1 rule 4)', () => {
  it('requires --jwt-type', () => {
    expect(loadConfig('all', [...BASE, ...DB]).errors).toEqual(['--jwt-type is required']);
  });
  it('refuses an unknown --jwt-type', () => {
    expect(load('--jwt-type=HS999').errors).toEqual(['unsupported --jwt-type: HS999']);
  });
  it('requires a secret for HS*', () => {
    expect(loadConfig('all', [...BASE, ...DB, '--jwt-type=HS384']).errors).toEqual(['--jwt-secret is required for HS384']);
  });
  it('requires a key pair for RS* and ES*', () => {
    expect(load('--jwt-type=RS256').errors).toEqual(['--jwt-private-key and --jwt-public-key are required for RS256']);
    expect(load('--jwt-type=ES512').errors).toEqual(['--jwt-private-key and --jwt-public-key are required for ES512']);
  });
  it('neither asks the notifications worker for a client id or the admin secret nor accepts them (it serves no API)', () => {
    expect(loadConfig('notifications', argvFor('notifications')).config?.clientId).toBeUndefined();
    expect(loadConfig('notifications', [...argvFor('notifications'), '--admin-secret=0123456789abcdef0123456789abcdef']).errors.join('\n')).toContain('--admin-secret');
    expect(loadConfig('notifications', [...argvFor('notifications'), '--client-id=gatehouse']).errors.join('\n')).toContain('--client-id');
  });
  it('requires --client-secret of the notifications worker: its internal token calls admin\'s internal API', () => {
    expect(loadConfig('notifications', argvFor('notifications')).config?.clientSecret).toBe('client-secret');
    expect(loadConfig('notifications', without(argvFor('notifications'), '--client-secret')).errors).toEqual(['--client-secret is required']);
  });
  it('does not ask notifications or the gateway for signing keys', () => {
    expect(loadConfig('notifications', argvFor('notifications')).errors).toEqual([]);
    expect(loadConfig('gateway', argvFor('gateway')).config?.jwtType).toBeUndefined();
  });
  it('refuses a custom access token script that does not compile', () => {
    const errors = load('--custom-access-token-script=function(user, tokenPayload) { return {; }').errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^--custom-access-token-script does not compile: \S/);
  });
  it('accepts a custom access token script in the Authorizer function format', () => {
    const script = 'function(user, tokenPayload) { var data = tokenPayload; data.extra = { id: user.id }; return data; }';
    expect(ok('authn', `--custom-access-token-script=${script}`).customAccessTokenScript).toBe(script);
  });
});

describe('ports (spec §1 rule 5)', () => {
  it.each([
    [['--grpc-port=8080'], '--http-port (8080) and --grpc-port (8080) must differ'],
    [['--metrics-port=8080'], '--http-port (8080) and --metrics-port (8080) must differ'],
    [['--grpc-port=7000', '--metrics-port=7000'], '--grpc-port (7000) and --metrics-port (7000) must differ'],
  ])('refuses %j', (extra, message) => {
    expect(load(...extra).errors).toEqual([message]);
  });
  it('reports every colliding pair', () => {
    expect(load('--http-port=1', '--grpc-port=1', '--metrics-port=1').errors).toEqual([
      '--http-port (1) and --grpc-port (1) must differ',
      '--http-port (1) and --metrics-port (1) must differ',
      '--grpc-port (1) and --metrics-port (1) must differ',
    ]);
  });
  it('lets several listeners ask the OS for a free port (0)', () => {
    expect(load('--http-port=0', '--grpc-port=0', '--metrics-port=0').errors).toEqual([]);
  });
  it('refuses a port out of range', () => {
    expect(load('--http-port=70000').errors).toEqual(['--http-port must be a port number between 0 and 65535, got "70000"']);
  });
});

describe('--http-workers (issue 38 §0)', () => {
  it('keeps one worker by default and resolves a number or auto', () => {
    expect(ok('all').httpWorkers).toBe(1);
    expect(ok('all', '--http-workers=auto').httpWorkers).toBe('auto');
    expect(ok('all', '--http-workers=2', '--redis-url=redis://127.0.0.1:6379').httpWorkers).toBe(2);
  });
  it('refuses more than one worker without Redis, and with the in-memory tuple store', () => {
    expect(load('--http-workers=2').errors).toEqual(['--http-workers=2 needs --redis-url (the workers keep their caches coherent through it); use --http-workers=1, or auto, which is 1 without Redis']);
    expect(load('--http-workers=auto', '--redis-url=redis://127.0.0.1:6379', '--fga-store=memory').errors).toEqual(['--http-workers above 1 cannot be used with --fga-store=memory (each worker would keep tuples of its own)']);
    expect(load('--http-workers=auto', '--fga-store=memory').errors).toEqual([]);
  });
  it('refuses a count that is not auto or 1 to 64', () => {
    expect(load('--http-workers=0').errors).toEqual(['--http-workers must be auto or a whole number from 1 to 64, got "0"']);
    expect(load('--http-workers=two').errors).toEqual(['--http-workers must be auto or a whole number from 1 to 64, got "two"']);
  });
});

describe('--url', () => {
  const malformed = '--url must be an absolute http or https URL with a host and no user-info, query or fragment';
  it('is required outside development', () => {
    expect(loadConfig('all', [...without(BASE, '--url'), ...DB, ...JWT]).errors).toEqual([
      '--url is required unless --env=development (for example --url=https://auth.example.com)',
    ]);
  });
  it.each(['auth.example.com', 'ftp://auth.example.com', 'https://user:pw@auth.example.com', 'https://auth.example.com/?a=1',
    'https://auth.example.com/#top', '/relative'])('refuses %s', (url) => {
    expect(load(`--url=${url}`).errors).toEqual([malformed]);
  });
  it('allows a path prefix and drops the trailing slash', () => {
    expect(ok('all', '--url=https://example.com/auth/').url).toBe('https://example.com/auth');
    expect(ok('all', '--url=https://auth.example.com/').url).toBe('https://auth.example.com');
  });
});

describe('features that need a provider', () => {
  const smtp = ['--smtp-host=smtp.example.com', '--smtp-port=587', '--smtp-sender-email=no-reply@example.com'];
  const twilio = ['--twilio-account-sid=AC1', '--twilio-api-key=SK1', '--twilio-api-secret=s', '--twilio-sender=+15550000000'];
  it('refuses email verification without SMTP', () => {
    expect(load('--enable-email-verification').errors).toEqual([
      '--enable-email-verification requires SMTP (--smtp-host, --smtp-port, --smtp-sender-email)',
    ]);
  });
  it('refuses magic link login without a complete SMTP setup', () => {
    expect(load('--enable-magic-link-login=true', '--smtp-host=smtp.example.com', '--smtp-port=587').errors).toEqual([
      '--enable-magic-link-login requires SMTP (--smtp-host, --smtp-port, --smtp-sender-email)',
    ]);
  });
  it('accepts both with SMTP configured', () => {
    expect(load('--enable-email-verification', '--enable-magic-link-login', ...smtp).errors).toEqual([]);
  });
  it('refuses phone verification without all four Twilio flags', () => {
    expect(load('--enable-phone-verification', ...twilio.slice(0, 3)).errors).toEqual([
      '--enable-phone-verification requires SMS (--twilio-account-sid, --twilio-api-key, --twilio-api-secret, --twilio-sender)',
    ]);
    expect(load('--enable-phone-verification', ...twilio).errors).toEqual([]);
  });
  it.each(['--twilio-account-sid', '--twilio-api-key', '--twilio-api-secret', '--twilio-sender'])(
    'refuses phone verification without %s, whatever --twilio-api-url says', (missing) => {
      const flags = twilio.filter((f) => !f.startsWith(`${missing}=`));
      expect(load('--enable-phone-verification', ...flags, '--twilio-api-url=http://127.0.0.1:9999').errors).toEqual([
        '--enable-phone-verification requires SMS (--twilio-account-sid, --twilio-api-key, --twilio-api-secret, --twilio-sender)',
      ]);
    },
  );
  it('--twilio-api-url (development and testing) must be an absolute http(s) URL', () => {
    expect(load(...twilio, '--twilio-api-url=http://127.0.0.1:9999/').errors).toEqual([]);
    expect(load(...twilio, '--twilio-api-url=127.0.0.1:9999').errors).toHaveLength(1);
  });
});

describe('roles and MFA', () => {
  it('refuses default roles outside --roles, naming each', () => {
    expect(load('--roles=user,admin', '--default-roles=user,editor,viewer').errors).toEqual([
      '--default-roles must be a subset of --roles: "editor" is not in --roles',
      '--default-roles must be a subset of --roles: "viewer" is not in --roles',
    ]);
  });
  it('refuses --enforce-mfa when no method is usable (behaviour.md §4.1)', () => {
    // Email and SMS OTP are not usable without SMTP/Twilio, so turning TOTP and passkeys off leaves none.
    expect(load('--enforce-mfa', '--disable-totp-login', '--disable-webauthn-mfa').errors).toEqual([
      '--enforce-mfa requires at least one usable MFA method',
    ]);
  });
  it('accepts --enforce-mfa when email OTP is usable through SMTP', () => {
    const config = ok('all', '--enforce-mfa', '--disable-totp-login', '--disable-webauthn-mfa',
      '--smtp-host=smtp.example.com', '--smtp-port=25', '--smtp-sender-email=a@example.com');
    expect(config.mfa).toEqual({ available: true, enforced: true, totp: false, email: true, sms: false, webauthn: false });
  });
});

describe('network lists', () => {
  it('refuses bad CIDRs, naming each', () => {
    expect(load('--trusted-proxies=10.0.0.0/8,10.0.0.0/33,proxy,fd00::/129').errors).toEqual([
      '--trusted-proxies: invalid CIDR "10.0.0.0/33"',
      '--trusted-proxies: invalid CIDR "proxy"',
      '--trusted-proxies: invalid CIDR "fd00::/129"',
    ]);
  });
  it('accepts IPv4 and IPv6 ranges and single addresses', () => {
    expect(ok('all', '--trusted-proxies=10.0.0.0/8, fd00::/8,192.168.1.10').trustedProxies).toEqual(['10.0.0.0/8', 'fd00::/8', '192.168.1.10']);
  });
  it('refuses bad origins, naming each', () => {
    expect(load('--allowed-origins=https://app.example.com,app.example.com,https://x.com/path,https://x.com?q').errors).toEqual([
      '--allowed-origins: invalid origin "app.example.com"',
      '--allowed-origins: invalid origin "https://x.com/path"',
      '--allowed-origins: invalid origin "https://x.com?q"',
    ]);
  });
  it('normalises origins and accepts a leading wildcard label', () => {
    expect(ok('all', '--allowed-origins=https://App.Example.com/,https://*.example.com,http://localhost:3000').allowedOrigins)
      .toEqual(['https://app.example.com', 'https://*.example.com', 'http://localhost:3000']);
  });
});

describe('engine, log level, gateway routes', () => {
  it('requires an http(s) --fga-store-url with --fga-store=openfga', () => {
    expect(load('--fga-store=openfga').errors).toEqual(['--fga-store-url is required when --fga-store is openfga']);
    expect(load('--fga-store=openfga', '--fga-store-url=postgres://x/y').errors).toEqual(['--fga-store-url must be an http(s) URL when --fga-store is openfga']);
    expect(load('--fga-store=openfga', '--fga-store-url=http://127.0.0.1:8080').errors).toEqual([]);
  });
  it('warns that the OpenFGA store id and token need --fga-store=openfga', () => {
    expect(load('--fga-store=memory', '--fga-store-id=01H', '--fga-store-api-token=t').warnings).toEqual(expect.arrayContaining([
      '--fga-store-id is ignored without --fga-store=openfga', '--fga-store-api-token is ignored without --fga-store=openfga',
    ]));
  });
  it('the OpenFGA API needs preshared keys unless authentication is off, which is warned about (issue 36 §2)', () => {
    expect(load('--openfga-http-port=8082').errors).toEqual(['--openfga-authn-preshared-keys is required with --openfga-http-port (or set --openfga-authn-method=none for local development)']);
    expect(load('--openfga-http-port=8082', '--openfga-authn-preshared-keys=k1,k2').errors).toEqual([]);
    const open = load('--openfga-http-port=8082', '--openfga-authn-method=none');
    expect(open.errors).toEqual([]);
    expect(open.warnings).toContain('--openfga-authn-method=none: the OpenFGA API on --openfga-http-port accepts every caller, unauthenticated; use it for local development only');
    expect(load('--openfga-authn-method=token').errors).toEqual([expect.stringContaining('--openfga-authn-method')]);
    expect(load('--openfga-http-port=8082', '--openfga-authn-method=oidc').errors).toEqual([]);
    expect(load('--openfga-authn-client-ids=c1').warnings).toContain('--openfga-authn-client-ids is ignored without --openfga-authn-method=oidc');
  });
  it('caps --openfga-max-tuples-per-write at the engine\'s 100', () => {
    expect(load('--openfga-max-tuples-per-write=101').errors).toEqual(['--openfga-max-tuples-per-write must be at most 100 (the engine writes at most 100 tuples per call)']);
    expect(load('--openfga-max-tuples-per-write=20').errors).toEqual([]);
  });
  it.each(['sqlite', 'postgres', 'mysql'])('requires --fga-store-url with --fga-store=%s', (store) => {
    expect(load(`--fga-store=${store}`).errors).toEqual([`--fga-store-url is required when --fga-store is ${store}`]);
  });
  it('needs no URL for the memory store', () => {
    expect(load('--fga-store=memory').errors).toEqual([]);
  });
  it('refuses an unknown engine store', () => {
    expect(load('--fga-store=redis').errors).toEqual(['unsupported --fga-store: redis']);
  });
  it('refuses an unknown log level', () => {
    expect(load('--log-level=verbose').errors).toEqual(['unsupported --log-level: verbose']);
  });
  it('requires the address of every service of this release on the gateway', () => {
    const required = PUBLIC_API_NAMES;
    expect(loadConfig('gateway', BASE).errors).toEqual([
      ...required.map((s) => `--${s}-address is required for the gateway command`),
      ...required.map((s) => `--${s}-graphql-url is required for the gateway command`),
    ]);
  });
  it('runs mfa without --authn-address, which it no longer accepts: calls go one way, authn asks mfa (issue 14 §5)', () => {
    expect(loadConfig('mfa', argvFor('mfa')).errors).toEqual([]);
    expect(loadConfig('mfa', [...argvFor('mfa'), '--authn-address=authn:9091']).errors).not.toEqual([]);
    expect(ok('authn', '--mfa-address=mfa:9091').mfaAddress).toBe('mfa:9091');
  });
  it('refuses a malformed service address', () => {
    expect(loadConfig('gateway', [...argvFor('gateway'), '--authz-address=authz:9091,authz']).errors).toEqual([
      '--authz-address must be host:port, got "authz"',
    ]);
  });
  it('parses the authz replica lists', () => {
    const config = ok('gateway');
    expect(config.authzAddress).toEqual(['authz-0:9091', 'authz-1:9091']);
    expect(config.authzGraphqlUrl).toEqual(['http://authz-0:8080/graphql', 'http://authz-1:8080/graphql']);
    expect(config.authnAddress).toBe('authn:9091');
  });
});

describe('collecting failures', () => {
  it('reports every failure at once, parse errors first, then the rules in table order', () => {
    const result = loadConfig('all', ['--http-port=x', '--enable-mfa', '--jwt-type=RS256', '--grpc-port=8081', '--log-level=loud']);
    expect(result.config).toBeUndefined();
    expect(result.errors).toEqual([
      'unknown flag --enable-mfa: removed; MFA methods are on by default, use --disable-mfa or --disable-<method>',
      '--http-port must be a port number between 0 and 65535, got "x"',
      'unsupported --log-level: loud',
      '--admin-secret is required and must not be empty',
      '--client-id is required',
      '--client-secret is required',
      '--database-type is required',
      'a database connection is required: set --database-url, or --database-host with --database-name',
      '--jwt-private-key and --jwt-public-key are required for RS256',
      '--grpc-port (8081) and --metrics-port (8081) must differ',
      '--url is required unless --env=development (for example --url=https://auth.example.com)',
    ]);
  });
});
