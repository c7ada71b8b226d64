/** @module @gatehouse/config/help.test: --help and listFlags come from the one registry (STYLE §5); parseConfigOrExit prints FATAL lines. */

import { describe, expect, it } from '@jest/globals';
import { COMMANDS } from './commands.ts';
import { helpText, listFlags } from './help.ts';
import { parseConfigOrExit } from './load.ts';
import { argvFor } from './test-fixtures.ts';

const camel = (flag: string): string => flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

describe('listFlags', () => {
  it('keys every flag by the camelCase of its kebab name', () => {
    for (const f of listFlags('all')) expect(f.key).toBe(camel(f.flag));
  });
  it('covers the spec tables and behaviour.md §1', () => {
    const flags = new Set(listFlags('all').map((f) => f.flag));
    const expected = [
      '--env', '--http-port', '--grpc-port', '--host', '--metrics-port', '--metrics-host', '--log-level', '--url',
      '--database-type', '--database-url', '--database-name', '--database-username', '--database-password', '--database-host',
      '--database-port', '--database-cert', '--database-ca-cert', '--database-cert-key', '--couchbase-bucket', '--couchbase-scope',
      '--couchbase-ram-quota', '--aws-region', '--aws-access-key-id', '--aws-secret-access-key', '--redis-url',
      '--client-id', '--client-secret', '--admin-secret', '--allowed-origins', '--default-authorize-response-type',
      '--default-authorize-response-mode', '--organization-name', '--organization-logo', '--enable-login-page',
      '--enable-playground', '--enable-graphql-introspection', '--roles', '--default-roles', '--protected-roles',
      '--enable-strong-password', '--enable-basic-authentication', '--enable-email-verification', '--enable-magic-link-login',
      '--enable-signup', '--enable-mobile-basic-authentication', '--enable-phone-verification', '--enforce-mfa',
      '--disable-mfa', '--disable-totp-login', '--disable-email-otp', '--disable-sms-otp', '--disable-webauthn-mfa',
      '--app-cookie-secure', '--admin-cookie-secure', '--jwt-type', '--jwt-secret', '--jwt-private-key', '--jwt-public-key',
      '--jwt-role-claim', '--custom-access-token-script', '--smtp-host', '--smtp-port', '--smtp-username', '--smtp-password',
      '--smtp-sender-email', '--smtp-sender-name', '--smtp-local-name', '--skip-tls-verification', '--twilio-account-sid',
      '--twilio-api-key', '--twilio-api-secret', '--twilio-sender', '--twilio-api-url', '--microsoft-tenant-id', '--reset-password-url',
      '--disable-admin-header-auth', '--trusted-proxies', '--fga-store', '--fga-store-url', '--fga-store-id', '--fga-store-api-token',
      '--access-token-expires-in', '--refresh-token-expires-in', '--session-expires-in', '--rate-limit-rps',
      '--rate-limit-burst', '--app-cookie-same-site', '--encryption-key', '--redirect-uris',
      '--allow-private-webhook-targets', '--jwt-secondary-type', '--jwt-secondary-secret', '--jwt-secondary-public-key',
      '--enable-hsts', '--enable-dynamic-client-registration', '--require-pushed-authorization-requests', '--enable-client-id-metadata-documents', '--dynamic-client-registration-max-clients', '--enable-org-discovery', '--graphql-max-depth', '--graphql-max-complexity', '--graphql-max-aliases',
      '--nats-url', '--nats-stream',
      '--database-create', '--log-format', '--otlp-endpoint',
      // behaviour.md §6.2 (issue 19): the DNS servers domain verification asks
      '--dns-resolver',
      // issue 30 §2: per-destination send caps and the SMS countries
      '--send-cap-per-hour', '--send-cap-per-day', '--sms-allowed-country-codes',
      // issue 22: tests only (libs/auth README "Credential caches"), shows the polling fallback
      '--test-notifications-off',
      // issue 32: bounded audit and webhook logs
      '--audit-log-retention', '--webhook-log-retention',
      // issue 34 §5: the RFC 8628 device code lifetime
      '--device-code-expires-in',
      // issue 34 §3: what a delegated token's permission checks answer (perms(agent) ∩ perms(user), or the user's)
      '--delegated-permissions',
      // issue 33 §1: the admin console under /dashboard
      '--enable-dashboard',
      // issue 34 §7: the MCP endpoint and its RFC 9728 metadata
      '--mcp-enabled',
      // issue 38 §0: worker processes sharing the HTTP and gRPC ports
      '--http-workers',
      // issue 36: OpenFGA's own HTTP API on the authz service
      '--openfga-http-port', '--openfga-http-host', '--openfga-grpc-port', '--gateway-openfga-url', '--openfga-authn-method', '--openfga-authn-preshared-keys', '--openfga-authn-client-ids', '--openfga-max-tuples-per-write',
      '--openfga-max-checks-per-batch-check', '--openfga-list-objects-max-results', '--openfga-list-users-max-results', '--openfga-list-deadline',
      ...['google', 'github', 'facebook', 'microsoft', 'apple', 'linkedin', 'discord', 'twitter', 'twitch', 'roblox']
        .flatMap((p) => [`--${p}-client-id`, `--${p}-client-secret`, `--${p}-scopes`]),
      // issue 20: another origin for a provider's endpoints (self-hosted, regional, test stand-ins)
      ...['google', 'github', 'facebook', 'microsoft', 'apple', 'linkedin', 'discord', 'twitter', 'twitch', 'roblox'].map((p) => `--${p}-base-url`),
    ];
    expect(expected.filter((f) => !flags.has(f))).toEqual([]);
    expect([...flags].filter((f) => !expected.includes(f))).toEqual([]);
  });
  it('gives types, defaults and secrecy', () => {
    const byFlag = new Map(listFlags('all').map((f) => [f.flag, f]));
    expect(byFlag.get('--http-port')).toMatchObject({ key: 'httpPort', type: 'number', default: 8080, secret: false, required: false });
    expect(byFlag.get('--enable-signup')).toMatchObject({ type: 'boolean', default: true });
    expect(byFlag.get('--roles')).toMatchObject({ type: 'list', default: ['user'] });
    expect(byFlag.get('--admin-secret')).toMatchObject({ type: 'string', secret: true, required: true });
    expect(byFlag.get('--admin-secret')).not.toHaveProperty('default');
    for (const f of listFlags('all')) expect(f.help.length).toBeGreaterThan(10);
  });
  it('gives each command its own set', () => {
    const flagsOf = (c: (typeof COMMANDS)[number]): string[] => listFlags(c).map((f) => f.flag);
    expect(flagsOf('gateway')).toContain('--authz-address');
    expect(flagsOf('gateway')).not.toContain('--database-url');
    expect(flagsOf('gateway')).not.toContain('--jwt-type');
    expect(flagsOf('notifications')).not.toContain('--jwt-secret');
    expect(flagsOf('notifications')).toContain('--database-url');
    expect(flagsOf('all')).not.toContain('--authn-address');
  });
});

describe('helpText', () => {
  it.each(COMMANDS)('lists every flag of %s', (command) => {
    const text = helpText(command);
    expect(text).toContain(`Usage: gatehouse ${command}`);
    for (const f of listFlags(command)) expect(text).toMatch(new RegExp(`^  ${f.flag} `, 'm'));
  });
  it('shows defaults but never a secret value', () => {
    const text = helpText('all');
    expect(text).toMatch(/--http-port <port>\s+HTTP listener port[^\n]*\n?[^\n]*\(default: 8080\)/);
    // (wrapped at the terminal width wherever the longest flag puts the description column)
    expect(text).toMatch(/--admin-secret <secret>\s+super-admin\s+secret;\s+required,\s+no\s+default;\s+use\s+32\+\s+random\s+characters\s+\(secret;\s+or\s+file:\/path\s+to\s+read\s+it\s+from\s+a\s+file\)\n/);
  });
});

describe('parseConfigOrExit', () => {
  class Exit extends Error {
    readonly code: number;
    constructor(code: number) {
      super(`exit ${code}`);
      this.code = code;
    }
  }
  const io = () => {
    const lines: string[] = [];
    const warnings: string[] = [];
    return {
      lines, warnings,
      io: { stderr: (l: string) => void lines.push(l), warn: (w: string) => void warnings.push(w), exit: (c: number): never => { throw new Exit(c); } },
    };
  };
  it('prints one FATAL line per failure and exits 1', () => {
    const out = io();
    expect(() => parseConfigOrExit('authz', ['--env_file=.env', '--grpc-port=8080'], out.io)).toThrow(new Exit(1));
    expect(out.lines[0]).toBe('FATAL: --env_file is not supported; pass configuration as flags');
    expect(out.lines).toContain('FATAL: --http-port (8080) and --grpc-port (8080) must differ');
    expect(out.lines.every((l) => l.startsWith('FATAL: '))).toBe(true);
  });
  it('prints help and exits 0 on --help', () => {
    const out = io();
    let printed = '';
    expect(() => parseConfigOrExit('orgs', ['--help'], { ...out.io, stdout: (t: string) => { printed = t; } })).toThrow(new Exit(0));
    expect(printed).toContain('Usage: gatehouse orgs');
    expect(out.lines).toEqual([]);
  });
  it('returns the config and passes warnings to io.warn', () => {
    const out = io();
    const config = parseConfigOrExit('mfa', argvFor('mfa', '--database_url=/tmp/x.db'), out.io);
    expect(config.command).toBe('mfa');
    expect(config.databaseUrl).toBe('/tmp/x.db');
    expect(out.warnings).toEqual(['--database_url is deprecated; use --database-url']);
    expect(out.lines).toEqual([]);
  });
});
