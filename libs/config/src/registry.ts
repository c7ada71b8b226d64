/** @module @gatehouse/config/registry: the one flag registry (STYLE §5); every startup flag of service-spec §1 and behaviour.md §1. */

import { ALL, CALLERS, DATA, GATEWAY, TOKENS } from './commands.ts';
import type { CommandName } from './commands.ts';
import { SERVICE_ROUTES } from '@gatehouse/contracts/service-names';
import {
  address, addressList, baseUrl, bool, cidrList, countryCodeList, duration, httpUrl, httpUrlList, jwtType, list, nonNegativeInt,
  oneOf, originList, pem, port, positiveInt, str, workerCount,
} from './parsers.ts';
import type { Parser } from './parsers.ts';

/**
 * One flag. `flag` is the long name plus a value placeholder (`--http-port <port>`); boolean flags
 * are written bare (`--enable-signup`) and accept `--flag`, `--flag=true|false`, `--flag true|false`.
 */
export interface FlagSpec<T> {
  readonly flag: string;
  readonly parser: Parser<T>;
  /** Parsed default. Absent: the value is `undefined` unless a derived default applies (see load.ts). */
  readonly default?: T;
  /** Help line; names the unit of numbers and any derived default. */
  readonly help: string;
  /** Redacted in logs and in help; never has a default. */
  readonly secret?: boolean;
  /** Missing or empty is fatal for every command that has the flag. */
  readonly required?: boolean;
  /** Given several times, the values join with commas in order (a key ring), instead of the last one winning. */
  readonly repeatable?: boolean;
}

/** A registry entry: a flag plus the help group it is listed under and the commands that accept it. */
export type PlacedFlag<S> = S & { readonly group: string; readonly commands: readonly CommandName[] };

type ParserValue<P> = P extends Parser<infer T> ? T : never;
type Checked<E> = { readonly [K in keyof E]: E[K] extends { parser: infer P } ? FlagSpec<ParserValue<P>> : never };

/** Tags a group of flags with its help heading and the commands that accept it. */
function section<const E extends Record<string, FlagSpec<unknown>>>(
  group: string,
  commands: readonly CommandName[],
  entries: E & Checked<E>,
): { readonly [K in keyof E]: PlacedFlag<E[K]> } {
  const out: Record<string, unknown> = {};
  // a flag may narrow its section's commands (e.g. --encryption-key: data services only)
  for (const [key, spec] of Object.entries(entries)) out[key] = { ...spec, group, commands: (spec as { commands?: readonly CommandName[] }).commands ?? commands };
  return out as { readonly [K in keyof E]: PlacedFlag<E[K]> };
}

type ProviderFlags<P extends string> =
  & { readonly [K in `${P}ClientId` | `${P}ClientSecret` | `${P}BaseUrl`]: FlagSpec<string> }
  & { readonly [K in `${P}Scopes`]: FlagSpec<readonly string[]> & { readonly default: readonly string[] } };

/**
 * The flags of one social login provider (spec §1 "Social providers", defaults behaviour.md §1.3), and
 * `--<provider>-base-url` (issue 20): another origin for every endpoint of the provider.
 */
function provider<const P extends string>(id: P, label: string, scopes: string): ProviderFlags<P> {
  return {
    [`${id}ClientId`]: {
      flag: `--${id}-client-id <id>`, parser: str,
      help: `${label} OAuth client id; ${label} login is on when this and --${id}-client-secret are both set`,
    },
    [`${id}ClientSecret`]: {
      flag: `--${id}-client-secret <secret>`, parser: str, secret: true, help: `${label} OAuth client secret`,
    },
    [`${id}Scopes`]: {
      flag: `--${id}-scopes <list>`, parser: list, default: list.parse(scopes, ''),
      help: `${label} scopes requested at login, comma list`,
    },
    [`${id}BaseUrl`]: {
      flag: `--${id}-base-url <url>`, parser: httpUrl,
      help: `replaces the scheme, host and port of every ${label} endpoint, keeping its documented path (self-hosted or regional endpoints, test stand-ins); for OpenID Connect providers the issuer moves with it (discovery)`,
    },
  } as ProviderFlags<P>;
}

/** Social providers in the order `enabledSocialProviders` lists them. */
export const SOCIAL_PROVIDERS = [
  'google', 'github', 'facebook', 'microsoft', 'apple', 'linkedin', 'discord', 'twitter', 'twitch', 'roblox',
] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

export const DATABASE_TYPES = ['sqlite', 'postgres', 'mysql', 'mariadb', 'mongodb'] as const;
export type DatabaseType = (typeof DATABASE_TYPES)[number];
export const FGA_STORES = ['sqlite', 'postgres', 'mysql', 'memory', 'openfga'] as const;
export type FgaStore = (typeof FGA_STORES)[number];

/**
 * The registry. Keys are the camelCase of the kebab flag and are the keys of `Config`.
 * Order is help order.
 */
type ServiceRoute = (typeof SERVICE_ROUTES)[number];
type RouteValue<R extends ServiceRoute> = R['replicated'] extends true ? readonly string[] : string;
type RouteFlags =
  & { readonly [R in ServiceRoute as `${R['name']}Address`]: FlagSpec<RouteValue<R>> & { readonly commands: readonly CommandName[] } }
  & { readonly [R in ServiceRoute as R['subgraph'] extends true ? `${R['name']}GraphqlUrl` : never]: FlagSpec<RouteValue<R>> };

/**
 * Split-mode routing, generated from services/registry.ts (issue 35 §1: a new service is its folder, its
 * proto and one registry line): `--<name>-address` for every service with a public API, accepted by the
 * gateway and by each service that calls its internal API, and `--<name>-graphql-url` (gateway only) for
 * each with a subgraph. A replicated service's flags take comma lists, one entry per replica.
 */
function serviceRoutes(): RouteFlags {
  const out: Record<string, FlagSpec<unknown> & { commands?: readonly CommandName[] }> = {};
  const names = (xs: readonly string[]): string => xs.length === 1 ? xs[0]! : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]!}`;
  for (const route of SERVICE_ROUTES as readonly ServiceRoute[]) {
    const callers = route.callers.filter((c) => c !== 'gateway');
    const [it, its] = route.replicated ? ['them', 'their'] : ['it', 'its'];
    const who = `the gateway routes to ${it}${callers.length > 0 ? `; ${names(callers)} call${callers.length === 1 ? 's' : ''} ${its} internal API` : ''}`;
    out[`${route.name}Address`] = route.replicated
      ? { flag: `--${route.name}-address <list>`, parser: addressList, commands: route.callers, help: `gRPC addresses of the ${route.name} replicas, comma list of host:port (${who})` }
      : { flag: `--${route.name}-address <host:port>`, parser: address, commands: route.callers, help: `gRPC address of the ${route.name} service (${who})` };
  }
  for (const route of SERVICE_ROUTES as readonly ServiceRoute[]) {
    if (route.subgraph) {
      out[`${route.name}GraphqlUrl`] = route.replicated
        ? { flag: `--${route.name}-graphql-url <list>`, parser: httpUrlList, help: `GraphQL subgraph URLs of the ${route.name} replicas, comma list` }
        : { flag: `--${route.name}-graphql-url <url>`, parser: httpUrl, help: `GraphQL subgraph URL of the ${route.name} service` };
    }
  }
  return out as unknown as RouteFlags;
}

export const registry = {
  ...section('Core', ALL, {
    env: {
      flag: '--env <name>', parser: str, default: 'production',
      help: 'deployment environment; only "development" changes behaviour: --url becomes optional, and without SMTP or Twilio the emails and text messages are kept in the development outbox (logged, listed by GET /v1/admin/dev_outbox) instead of being sent',
    },
    httpPort: { flag: '--http-port <port>', parser: port, default: 8080, help: 'HTTP listener port: REST /v1, GraphQL, health probes (0 = any free port)' },
    grpcPort: { flag: '--grpc-port <port>', parser: port, default: 9091, help: 'native gRPC listener port (0 = any free port)' },
    host: { flag: '--host <address>', parser: str, default: '0.0.0.0', help: 'interface the HTTP and gRPC listeners bind to' },
    metricsPort: { flag: '--metrics-port <port>', parser: port, default: 8081, help: 'Prometheus GET /metrics listener port, the only place /metrics is served (0 = any free port)' },
    httpWorkers: {
      flag: '--http-workers <n|auto>', parser: workerCount, default: 1, commands: ['all', 'gateway'],
      help: 'processes serving the HTTP and public gRPC ports (node:cluster, one port shared): auto = one per core; above 1 needs --redis-url, every worker keeps its own caches coherent through it, so a logout, revoke or tuple write is seen by the next request on any worker; /metrics sums the workers (docs/operations.md "Using every core")',
    },
    metricsHost: { flag: '--metrics-host <address>', parser: str, default: '127.0.0.1', help: 'interface of the metrics listener; loopback by default, keep it private' },
    logLevel: { flag: '--log-level <level>', parser: oneOf(['debug', 'info', 'warn', 'error'], true), default: 'info', help: 'log level: debug, info, warn or error' },
    logFormat: {
      flag: '--log-format <format>', parser: oneOf(['json', 'pretty']), default: 'json',
      help: 'log line format: json (one JSON object per line, for collectors) or pretty (human-readable lines for a terminal; development only)',
    },
    otlpEndpoint: {
      flag: '--otlp-endpoint <url>', parser: httpUrl,
      help: 'OpenTelemetry collector base URL (OTLP/HTTP protobuf), e.g. http://127.0.0.1:4318; spans go to <url>/v1/traces. Unset: tracing is off and costs nothing',
    },
    url: {
      flag: '--url <url>', parser: baseUrl,
      help: 'public base URL (iss, emailed links, passkey RP, SSO/SCIM URLs), e.g. https://auth.example.com; required unless --env=development, where it defaults to http://localhost:<http-port>',
    },
  }),
  ...section('Events', DATA, {
    natsUrl: {
      flag: '--nats-url <url>', parser: str, secret: true,
      help: 'NATS server URL, e.g. nats://127.0.0.1:4222; when set, events travel over NATS JetStream, otherwise over the in-process bus (all-in-one only)',
    },
    natsStream: {
      flag: '--nats-stream <name>', parser: str, default: 'GATEHOUSE',
      help: 'JetStream stream name (subjects are its lower-cased name + ".>"); give each Gatehouse deployment sharing one NATS its own',
    },
  }),
  ...section('Database', DATA, {
    databaseType: { flag: '--database-type <type>', parser: oneOf(['sqlite', 'postgres', 'mysql', 'mariadb', 'mongodb'], true), help: 'main database: sqlite, postgres, mysql, mariadb or mongodb; required' },
    databaseUrl: { flag: '--database-url <url>', parser: str, secret: true, help: 'connection URL (a file path for sqlite); or give --database-host with --database-name' },
    databaseName: { flag: '--database-name <name>', parser: str, help: 'database name, with --database-host' },
    databaseCreate: {
      flag: '--database-create', parser: bool, default: false,
      help: 'create the PostgreSQL/MySQL database (and the --fga-store-url one) when it does not exist; without it a missing database stops start-up, so a mistyped name is noticed',
    },
    databaseUsername: { flag: '--database-username <user>', parser: str, help: 'database user, with --database-host' },
    databasePassword: { flag: '--database-password <password>', parser: str, secret: true, help: 'database password, with --database-host' },
    databaseHost: { flag: '--database-host <host>', parser: str, help: 'database host, used when --database-url is not set' },
    databasePort: { flag: '--database-port <port>', parser: port, help: 'database port, with --database-host (driver default when unset)' },
    databaseCert: { flag: '--database-cert <pem>', parser: pem, help: 'TLS client certificate for the database, PEM' },
    databaseCaCert: { flag: '--database-ca-cert <pem>', parser: pem, help: 'CA certificate that signs the database server certificate, PEM' },
    databaseCertKey: { flag: '--database-cert-key <pem>', parser: pem, secret: true, help: 'private key of --database-cert, PEM' },
    couchbaseBucket: { flag: '--couchbase-bucket <name>', parser: str, help: 'Couchbase bucket (accepted for compatibility; couchbase is not a supported --database-type)' },
    couchbaseScope: { flag: '--couchbase-scope <name>', parser: str, help: 'Couchbase scope (accepted for compatibility)' },
    couchbaseRamQuota: { flag: '--couchbase-ram-quota <mb>', parser: nonNegativeInt, help: 'Couchbase bucket RAM quota in MB (accepted for compatibility)' },
    awsRegion: { flag: '--aws-region <region>', parser: str, help: 'AWS region for DynamoDB (accepted for compatibility; dynamodb is not a supported --database-type)' },
    awsAccessKeyId: { flag: '--aws-access-key-id <id>', parser: str, help: 'AWS access key id (accepted for compatibility)' },
    awsSecretAccessKey: { flag: '--aws-secret-access-key <secret>', parser: str, secret: true, help: 'AWS secret access key (accepted for compatibility)' },
  }),
  // notifications checks no caller: no session store, no client id or admin secret (issue 15: a
  // process receives only the secrets it uses); it takes --client-secret to call admin's internal API
  ...section('Session memory store', CALLERS, {
    redisUrl: {
      flag: '--redis-url <url>', parser: str, secret: true,
      help: 'Redis URL; when set, sessions and the rate limiter live in Redis, shared by every process (split mode needs it for authz, admin and orgs to check callers); MFA challenges and lockout counters stay in the main database',
    },
    testNotificationsOff: {
      flag: '--test-notifications-off', parser: bool, default: false, commands: TOKENS,
      help: 'tests only, never in production: ignore cache-invalidation notifications, so caches fall back to polling every 1000 ms (libs/auth README)',
    },
  }),
  ...section('App', ALL, {
    clientId: { flag: '--client-id <id>', parser: str, required: true, commands: CALLERS, help: 'client id of this instance; required' },
    // notifications too: its internal token (derived from it) authenticates its calls to admin's internal API
    clientSecret: { flag: '--client-secret <secret>', parser: str, required: true, secret: true, help: 'client secret of this instance; required' },
    adminSecret: { flag: '--admin-secret <secret>', parser: str, required: true, secret: true, commands: CALLERS, help: 'super-admin secret; required, no default; use 32+ random characters' },
    allowedOrigins: { flag: '--allowed-origins <list>', parser: originList, default: ['*'], help: 'origins allowed for CORS and redirects, comma list of scheme://host[:port] (host may start with *.); * admits only the server\'s own origin for state-changing calls and answers CORS for any origin without credentials' },
    defaultAuthorizeResponseType: { flag: '--default-authorize-response-type <type>', parser: oneOf(['code', 'token', 'id_token']), default: 'token', help: '/authorize response_type when the request has none: code, token or id_token' },
    defaultAuthorizeResponseMode: { flag: '--default-authorize-response-mode <mode>', parser: oneOf(['query', 'fragment', 'form_post', 'web_message']), default: 'query', help: '/authorize response_mode when the request has none: query, fragment, form_post or web_message' },
    redirectUris: { flag: '--redirect-uris <list>', parser: httpUrlList, default: [], help: 'redirect URIs accepted by exact match, comma list of absolute http(s) URLs (origins in --allowed-origins are accepted too)' },
    encryptionKey: { flag: '--encryption-key <keys>', parser: str, secret: true, repeatable: true, commands: ['all', 'authn', 'mfa', 'notifications', 'orgs'], help: 'key ring for OTP HMACs, SCIM token HMACs, TOTP seeds, the links and codes of delivery jobs at rest, upstream secrets, SAML IdP keys and client-secret MACs: one key, or several comma-separated (or the flag repeated); the first seals and MACs, every key opens and verifies (rotation: put the new key first, run `gatehouse reseal`, then drop the old one); use 32+ random characters per key, no commas' },
    accessTokenExpiresIn: { flag: '--access-token-expires-in <seconds>', parser: positiveInt, default: 1800, help: 'access and ID token lifetime in seconds' },
    refreshTokenExpiresIn: { flag: '--refresh-token-expires-in <seconds>', parser: positiveInt, default: 2592000, help: 'refresh token lifetime in seconds (30 days)' },
    sessionExpiresIn: { flag: '--session-expires-in <seconds>', parser: positiveInt, default: 86400, help: 'browser session lifetime in seconds (1 day)' },
    rateLimitRps: { flag: '--rate-limit-rps <n>', parser: nonNegativeInt, default: 30, help: 'per-IP token bucket refill in requests per second; 0 disables rate limiting' },
    rateLimitBurst: { flag: '--rate-limit-burst <n>', parser: nonNegativeInt, default: 20, help: 'per-IP token bucket size in requests; 0 disables rate limiting' },
    sendCapPerHour: { flag: '--send-cap-per-hour <n>', parser: nonNegativeInt, default: 5, commands: ['all', 'authn', 'mfa'], help: 'messages (codes and link mails) one email address or phone number may receive per hour, across replicas; 0 disables' },
    sendCapPerDay: { flag: '--send-cap-per-day <n>', parser: nonNegativeInt, default: 10, commands: ['all', 'authn', 'mfa'], help: 'messages one email address or phone number may receive per 24 hours, across replicas; 0 disables' },
    smsAllowedCountryCodes: { flag: '--sms-allowed-country-codes <list>', parser: countryCodeList, default: [], commands: ['all', 'authn', 'mfa'], help: 'country calling codes SMS may be sent to, comma list such as +1,+44 (default: any); other numbers are refused without a send' },
  }),
  ...section('Organization and UI', ALL, {
    organizationName: { flag: '--organization-name <name>', parser: str, default: 'Gatehouse', help: 'organization name: TOTP issuer, passkey RP name, email templates' },
    organizationLogo: { flag: '--organization-logo <url>', parser: str, default: '', help: 'organization logo URL for the UI and email templates' },
    enableLoginPage: { flag: '--enable-login-page', parser: bool, default: true, help: 'serve the hosted login page under /app (sign-up, login, password reset, magic link, MFA, passkeys)' },
    enableDashboard: { flag: '--enable-dashboard', parser: bool, default: true, help: 'serve the admin console under /dashboard (signed in with the admin secret: overview, users, audit log, webhooks, clients, authorization)' },
    enablePlayground: { flag: '--enable-playground', parser: bool, default: true, help: 'serve the GraphQL playground (GraphiQL) at GET /graphql to a browser that sends the x-service-admin-secret header' },
    enableGraphqlIntrospection: { flag: '--enable-graphql-introspection', parser: bool, default: true, help: 'allow schema introspection on /graphql' },
    enableOrgDiscovery: { flag: '--enable-org-discovery', parser: bool, default: false, help: 'mount GET /api/v1/org-discovery?email= and set meta.is_org_discovery_enabled' },
    graphqlMaxDepth: { flag: '--graphql-max-depth <n>', parser: positiveInt, default: 15, help: 'GraphQL query depth limit (levels); deeper queries are rejected before execution' },
    graphqlMaxComplexity: { flag: '--graphql-max-complexity <n>', parser: positiveInt, default: 300, help: 'GraphQL query complexity limit (selections counted: fields, fragment spreads and inline fragments, a fragment each time it is spread, over the whole document); larger queries are rejected before execution' },
    graphqlMaxAliases: { flag: '--graphql-max-aliases <n>', parser: positiveInt, default: 30, help: 'GraphQL alias count limit per query' },
  }),
  ...section('Auth behaviour', ALL, {
    roles: { flag: '--roles <list>', parser: list, default: ['user'], help: 'roles a user may hold, comma list' },
    defaultRoles: { flag: '--default-roles <list>', parser: list, default: ['user'], help: 'roles given at sign-up, comma list; must be a subset of --roles' },
    protectedRoles: { flag: '--protected-roles <list>', parser: list, default: [], help: 'roles that sign-up can never request, comma list' },
    enableStrongPassword: { flag: '--enable-strong-password', parser: bool, default: true, help: 'require strong passwords' },
    enableBasicAuthentication: { flag: '--enable-basic-authentication', parser: bool, default: true, help: 'allow email + password sign-up and login' },
    enableEmailVerification: { flag: '--enable-email-verification', parser: bool, default: false, help: 'require email verification; needs SMTP' },
    enableMagicLinkLogin: { flag: '--enable-magic-link-login', parser: bool, default: false, help: 'allow magic link login; needs SMTP' },
    enableSignup: { flag: '--enable-signup', parser: bool, default: true, help: 'allow self sign-up' },
    enableMobileBasicAuthentication: { flag: '--enable-mobile-basic-authentication', parser: bool, default: true, help: 'allow phone number + password sign-up and login' },
    enablePhoneVerification: { flag: '--enable-phone-verification', parser: bool, default: false, help: 'require phone verification; needs SMS (Twilio)' },
    enforceMfa: { flag: '--enforce-mfa', parser: bool, default: false, help: 'every user must complete MFA; needs at least one usable MFA method' },
  }),
  ...section('MFA opt-outs', ALL, {
    disableMfa: { flag: '--disable-mfa', parser: bool, default: false, help: 'turn all MFA off (wins over --enforce-mfa)' },
    disableTotpLogin: { flag: '--disable-totp-login', parser: bool, default: false, help: 'turn TOTP (authenticator app) MFA off' },
    disableEmailOtp: { flag: '--disable-email-otp', parser: bool, default: false, help: 'turn email OTP MFA off (it is usable only with SMTP configured)' },
    disableSmsOtp: { flag: '--disable-sms-otp', parser: bool, default: false, help: 'turn SMS OTP MFA off (it is usable only with SMS configured)' },
    disableWebauthnMfa: { flag: '--disable-webauthn-mfa', parser: bool, default: false, help: 'turn passkey-as-MFA off' },
  }),
  ...section('Cookies', ALL, {
    appCookieSecure: { flag: '--app-cookie-secure', parser: bool, default: true, help: 'Secure attribute on user cookies; keep true outside local http development' },
    adminCookieSecure: { flag: '--admin-cookie-secure', parser: bool, default: true, help: 'Secure attribute on the admin cookie' },
    appCookieSameSite: { flag: '--app-cookie-same-site <mode>', parser: oneOf(['none', 'lax', 'strict']), default: 'none', help: 'SameSite of user cookies: none, lax or strict (none needs --app-cookie-secure)' },
  }),
  ...section('JWT', TOKENS, {
    jwtType: { flag: '--jwt-type <alg>', parser: jwtType, help: 'signing algorithm, required: HS256/384/512 (with --jwt-secret), RS256/384/512 or ES256/384/512 (with a key pair)' },
    jwtSecret: { flag: '--jwt-secret <secret>', parser: str, secret: true, help: 'HMAC signing secret for HS*; use 32+ random bytes' },
    jwtPrivateKey: { flag: '--jwt-private-key <pem>', parser: pem, secret: true, help: 'PEM private key for RS* (RSA, 2048+ bits) or ES* (EC on the matching curve); literal \\n sequences are accepted' },
    jwtPublicKey: { flag: '--jwt-public-key <pem>', parser: pem, help: 'PEM public key matching --jwt-private-key' },
    jwtRoleClaim: { flag: '--jwt-role-claim <claim>', parser: str, default: 'role', help: 'ID-token claim that carries the granted roles' },
    customAccessTokenScript: { flag: '--custom-access-token-script <js>', parser: str, help: 'JavaScript function expression (user, tokenPayload) => claims that adds claims to access tokens' },
    jwtSecondaryType: { flag: '--jwt-secondary-type <alg>', parser: jwtType, help: 'algorithm of the previous signing key, kept for verification during key rotation' },
    jwtSecondarySecret: { flag: '--jwt-secondary-secret <secret>', parser: str, secret: true, help: 'previous HMAC secret (verification only)' },
    jwtSecondaryPublicKey: { flag: '--jwt-secondary-public-key <pem>', parser: pem, help: 'previous PEM public key (verification only; published in JWKS)' },
  }),
  ...section('SMTP', ALL, {
    smtpHost: { flag: '--smtp-host <host>', parser: str, help: 'SMTP server host; email counts as configured with --smtp-port and --smtp-sender-email' },
    smtpPort: { flag: '--smtp-port <port>', parser: port, help: 'SMTP server port' },
    smtpUsername: { flag: '--smtp-username <user>', parser: str, help: 'SMTP login user name' },
    smtpPassword: { flag: '--smtp-password <password>', parser: str, secret: true, commands: ['all', 'notifications'], help: 'SMTP login password' },
    smtpSenderEmail: { flag: '--smtp-sender-email <email>', parser: str, help: 'From address of outgoing email' },
    smtpSenderName: { flag: '--smtp-sender-name <name>', parser: str, help: 'From name of outgoing email; defaults to --organization-name' },
    smtpLocalName: { flag: '--smtp-local-name <name>', parser: str, help: 'host name sent in SMTP HELO/EHLO' },
    skipTlsVerification: { flag: '--skip-tls-verification', parser: bool, default: false, help: 'do not verify the SMTP server certificate (testing only)' },
  }),
  ...section('SMS provider', ALL, {
    twilioAccountSid: { flag: '--twilio-account-sid <sid>', parser: str, help: 'Twilio account SID; SMS counts as configured when all four --twilio-* flags are set' },
    twilioApiKey: { flag: '--twilio-api-key <key>', parser: str, help: 'Twilio API key SID' },
    twilioApiSecret: { flag: '--twilio-api-secret <secret>', parser: str, secret: true, help: 'Twilio API key secret' },
    twilioSender: { flag: '--twilio-sender <number>', parser: str, help: 'sending phone number (E.164) or messaging service SID' },
    twilioApiUrl: {
      flag: '--twilio-api-url <url>', parser: httpUrl, commands: ['all', 'notifications'],
      help: 'development and testing only: base URL of a stand-in for Twilio\'s REST API (default https://api.twilio.com)',
    },
  }),
  ...section('Social providers', ALL, {
    ...provider('google', 'Google', 'openid,profile,email'),
    ...provider('github', 'GitHub', 'read:user,user:email'),
    ...provider('facebook', 'Facebook', 'public_profile,email'),
    ...provider('microsoft', 'Microsoft', 'openid,profile,email'),
    microsoftTenantId: { flag: '--microsoft-tenant-id <tenant>', parser: str, default: 'common', help: 'Microsoft Entra tenant id or domain whose users may sign in. Set it for Microsoft login: the multi-tenant values common, organizations and consumers publish a templated issuer that OpenID Connect discovery refuses, so login fails with them' },
    ...provider('apple', 'Apple', 'email,name'),
    ...provider('linkedin', 'LinkedIn', 'openid,profile,email'),
    ...provider('discord', 'Discord', 'identify,email'),
    ...provider('twitter', 'Twitter', 'tweet.read,users.read'),
    ...provider('twitch', 'Twitch', 'openid,user:read:email'),
    ...provider('roblox', 'Roblox', 'openid,profile'),
  }),
  ...section('Other', ALL, {
    resetPasswordUrl: { flag: '--reset-password-url <url>', parser: httpUrl, help: 'page that receives password reset links; defaults to <url>/app/reset-password' },
    dnsResolver: { flag: '--dns-resolver <list>', parser: addressList, commands: ['all', 'orgs'], help: 'DNS servers that verify org domains (the TXT challenge), comma list of ip:port; default: the system resolver' },
  }),
  ...section('Hardening', ALL, {
    disableAdminHeaderAuth: { flag: '--disable-admin-header-auth', parser: bool, default: false, help: 'refuse the admin-secret header; only the secure admin cookie authenticates admins' },
    trustedProxies: { flag: '--trusted-proxies <cidrs>', parser: cidrList, default: [], help: 'reverse proxy networks whose X-Forwarded-For is trusted, comma list of CIDRs; none by default' },
    allowPrivateWebhookTargets: { flag: '--allow-private-webhook-targets', parser: bool, default: false, help: 'allow webhook, test_endpoint, back-channel logout and OAuth client metadata document targets in private or special ranges (logs a warning)' },
    enableHsts: { flag: '--enable-hsts', parser: bool, default: false, help: 'send Strict-Transport-Security: max-age=31536000; includeSubDomains' },
  }),
  ...section('Retention', ['all', 'admin'], {
    auditLogRetention: { flag: '--audit-log-retention <duration>', parser: duration, default: 31_536_000, help: 'how long audit log rows are kept, e.g. 365d, 720h or seconds; older rows are deleted by admin\'s retention sweeper every minute; 0 keeps them forever (default 365d)' },
    webhookLogRetention: { flag: '--webhook-log-retention <duration>', parser: duration, default: 2_592_000, help: 'how long webhook delivery log rows are kept, e.g. 30d, 72h or seconds; 0 keeps them forever (default 30d)' },
  }),
  ...section('OAuth clients', ALL, {
    enableDynamicClientRegistration: {
      flag: '--enable-dynamic-client-registration', parser: bool, default: false, commands: ['all', 'authn'],
      help: 'serve POST /oauth/register (RFC 7591: public clients only, PKCE S256, https, loopback or private-use redirect URIs; 10 per address per hour) and RFC 7592 management with the registration access token',
    },
    dynamicClientRegistrationMaxClients: {
      flag: '--dynamic-client-registration-max-clients <n>', parser: positiveInt, default: 1000, commands: ['all', 'authn'],
      help: 'ceiling on the clients registered through /oauth/register; further registrations answer 403',
    },
    enableClientIdMetadataDocuments: {
      flag: '--enable-client-id-metadata-documents', parser: bool, default: false, commands: ['all', 'authn'],
      help: 'accept an https URL as client_id at /authorize and the token endpoints: the OAuth Client ID Metadata Document it serves (public clients, PKCE S256, its redirect_uris) is fetched through the outbound guard of webhooks (at most 5 KiB, 5 s), kept for its Cache-Control max-age (60 s to 1 day, default 5 min), and its users always see the consent page',
    },
    requirePushedAuthorizationRequests: {
      flag: '--require-pushed-authorization-requests', parser: bool, default: false, commands: ['all', 'authn'],
      help: 'refuse /authorize requests not pushed first to POST /oauth/par (RFC 9126 §5) for every OAuth client except the server\'s own (--client-id)',
    },
    gatewayOpenfgaUrl: {
      flag: '--gateway-openfga-url <url>', parser: httpUrl, commands: ['all', 'gateway'],
      help: 'route OpenFGA\'s HTTP API through the gateway: requests to /stores and below are passed, as they came (bearer token included), to this base URL of the authz service\'s OpenFGA HTTP listener (--openfga-http-port), which authenticates them; state-changing calls must carry a bearer token (the CSRF check exempts them only then); off when absent',
    },
    mcpEnabled: {
      flag: '--mcp-enabled', parser: bool, default: false, commands: ['all', 'gateway'],
      help: 'serve the MCP endpoint POST /mcp (Streamable HTTP; tools check_permissions, list_permissions, profile, meta for the token\'s user) and its RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp; /mcp takes only access tokens issued for it (RFC 8707 resource=<url>/mcp)',
    },
    deviceCodeExpiresIn: {
      flag: '--device-code-expires-in <seconds>', parser: positiveInt, default: 600, commands: ['all', 'authn'],
      help: 'lifetime in seconds of a device code and its user code from POST /oauth/device_authorization (RFC 8628 §3.2 expires_in)',
    },
  }),
  ...section('Authorization engine', DATA, {
    fgaStore: { flag: '--fga-store <store>', parser: oneOf(FGA_STORES, true), help: 'engine store: sqlite, postgres, mysql, memory or openfga (an OpenFGA server answers instead of the embedded engine); default: reuse the main database when it is SQL, off for mongodb' },
    fgaStoreUrl: { flag: '--fga-store-url <url>', parser: str, secret: true, help: 'engine store connection URL (a file path for sqlite; the OpenFGA HTTP API URL for openfga); required with a SQL or openfga --fga-store' },
    fgaStoreId: { flag: '--fga-store-id <id>', parser: str, help: 'OpenFGA store id (with --fga-store=openfga); default: the store named "gatehouse", created when missing' },
    fgaStoreApiToken: { flag: '--fga-store-api-token <token>', parser: str, secret: true, help: 'OpenFGA API token, sent as a bearer token (with --fga-store=openfga, when the server has preshared-key authentication on)' },
  }),
  ...section('Delegation', ['all', 'authz'], {
    delegatedPermissions: {
      flag: '--delegated-permissions <mode>', parser: oneOf(['intersection', 'user'] as const), default: 'intersection',
      help: 'what check_permissions and list_permissions answer for a delegated token (RFC 8693 token exchange, with an act claim) when the authorization model declares type agent: intersection (allowed only when both user:<sub> and agent:<client id> are) or user (the user\'s own permissions, as before agents had types; for migration)',
    },
  }),
  ...section('OpenFGA API', ['all', 'authz'], {
    openfgaHttpPort: { flag: '--openfga-http-port <port>', parser: port, help: 'serve OpenFGA\'s own HTTP API (the paths and bodies of OpenFGA\'s REST API, for the OpenFGA SDKs and CLI) on this port of the authz service (0 = any free port); off when absent. The gateway routes it under /stores only with --gateway-openfga-url' },
    openfgaHttpHost: { flag: '--openfga-http-host <address>', parser: str, default: '127.0.0.1', help: 'interface the OpenFGA API listeners (HTTP and gRPC) bind to (default loopback only: set it, e.g. to 0.0.0.0, to reach it from other hosts)' },
    openfgaGrpcPort: { flag: '--openfga-grpc-port <port>', parser: port, help: 'serve the gRPC form of OpenFGA\'s API (openfga.v1.OpenFGAService, OpenFGA\'s published protos; same methods, authentication and limits as --openfga-http-port) on this port of the authz service (0 = any free port); off when absent. Not routed by the gateway (clients reach it directly, or through the chart\'s OpenFGA Service)' },
    openfgaAuthnMethod: { flag: '--openfga-authn-method <method>', parser: oneOf(['none', 'preshared', 'oidc'] as const), default: 'preshared', help: 'how OpenFGA API callers authenticate: preshared (Authorization: Bearer <one of --openfga-authn-preshared-keys>), oidc (Authorization: Bearer <an access token Gatehouse issued to a service account by client_credentials>, optionally only --openfga-authn-client-ids) or none (local development only; logged as a warning at start-up)' },
    openfgaAuthnClientIds: { flag: '--openfga-authn-client-ids <list>', parser: list, help: 'with --openfga-authn-method=oidc: the service accounts (client ids) allowed to call the OpenFGA API, comma list; default: every service account' },
    openfgaAuthnPresharedKeys: { flag: '--openfga-authn-preshared-keys <list>', parser: list, secret: true, help: 'the keys OpenFGA API callers present as bearer tokens, comma list (several allow rotation); required with --openfga-authn-method=preshared' },
    openfgaMaxTuplesPerWrite: { flag: '--openfga-max-tuples-per-write <n>', parser: positiveInt, default: 100, help: 'most writes plus deletes one OpenFGA Write call may carry, at most 100 (OpenFGA\'s maxTuplesPerWrite)' },
    openfgaMaxChecksPerBatchCheck: { flag: '--openfga-max-checks-per-batch-check <n>', parser: positiveInt, default: 50, help: 'most checks one OpenFGA BatchCheck call may carry (OpenFGA\'s maxChecksPerBatchCheck)' },
    openfgaListObjectsMaxResults: { flag: '--openfga-list-objects-max-results <n>', parser: nonNegativeInt, default: 1000, help: 'most objects ListObjects answers (0 = no cap past the engine\'s own 1000; OpenFGA\'s listObjects-max-results); StreamedListObjects streams them all' },
    openfgaListUsersMaxResults: { flag: '--openfga-list-users-max-results <n>', parser: nonNegativeInt, default: 1000, help: 'most users ListUsers answers (0 = no cap past the engine\'s own 1000; OpenFGA\'s listUsers-max-results)' },
    openfgaListDeadline: { flag: '--openfga-list-deadline <duration>', parser: duration, default: 3, help: 'time a ListObjects, StreamedListObjects or ListUsers call may take, e.g. 3s, or seconds; past it the call fails with deadline_exceeded (OpenFGA\'s listObjects-deadline; 0 = none)' },
  }),
  ...section('Split mode (routing)', GATEWAY, serviceRoutes()),
};

export type Registry = typeof registry;
export type FlagKey = keyof Registry;

/** The value type of a registry entry: with a default or `required`, never undefined. */
type ValueOf<S> = S extends { parser: Parser<infer T> }
  ? S extends { default: unknown } | { required: true } ? T : T | undefined
  : never;

/** Every flag's parsed value, keyed by the camelCase flag name. */
export type FlagValues = { readonly [K in FlagKey]: ValueOf<Registry[K]> };

/** The registry as a plain list, for help, docs and Helm values. */
export function registryEntries(): Array<[FlagKey, PlacedFlag<FlagSpec<unknown>>]> {
  return Object.entries(registry) as Array<[FlagKey, PlacedFlag<FlagSpec<unknown>>]>;
}

/** `--http-port <port>` → `--http-port`. */
export function flagName(spec: { readonly flag: string }): string {
  return spec.flag.split(' ')[0] as string;
}
