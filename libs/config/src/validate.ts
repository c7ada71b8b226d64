/** @module @gatehouse/config/validate: cross-flag startup rules and warnings (spec §1 rules 1-6, behaviour.md §1.4). */

import { SERVICE_ROUTES } from '@gatehouse/contracts/service-names';
import type { CommandName } from './commands.ts';
import { clientOf, usableMfaMethods } from './derive.ts';
import type { Derived } from './derive.ts';
import { checkCustomScript, checkJwt, shortHmacSecrets } from './jwt.ts';
import { SOCIAL_PROVIDERS, registry } from './registry.ts';
import type { FlagKey, FlagValues } from './registry.ts';

/** What the rules see: parsed values (derived defaults applied), derived fields, and which flags had a bad value. */
export interface RuleInput {
  readonly command: CommandName;
  readonly values: FlagValues;
  readonly derived: Derived;
  /** flags whose value failed to parse; their error is already reported, so "is required" is not added */
  readonly invalid: ReadonlySet<FlagKey>;
}

const applies = (key: FlagKey, command: CommandName): boolean =>
  (registry[key].commands as readonly CommandName[]).includes(command);

/** Set, or given but invalid (reported elsewhere). */
const given = (i: RuleInput, key: FlagKey): boolean => i.values[key] !== undefined || i.invalid.has(key);

const SQL_FGA_STORES = new Set(['sqlite', 'postgres', 'mysql', 'openfga']);
// Where the gateway finds every service of services/registry.ts that has a public API (generated).
const GATEWAY_ROUTES: readonly FlagKey[] = [
  ...SERVICE_ROUTES.map((r) => `${r.name}Address` as FlagKey),
  ...SERVICE_ROUTES.filter((r) => r.subgraph).map((r) => `${r.name}GraphqlUrl` as FlagKey),
];
/**
 * Peers a service cannot run without. Calls go one way (issue 14 §5): authn asks mfa, mfa calls no
 * one, and authn without `--mfa-address` still runs (its main warns that logins needing an MFA session
 * are refused), so no service needs one today.
 */
const PEER_ROUTES: Partial<Record<CommandName, FlagKey>> = {};

/**
 * Every fatal rule of behaviour.md §1.4 that needs more than one flag, in the table's order.
 * Single-value problems (bad port, unsupported enum, bad CIDR/origin) come from the parsers.
 *
 * @returns one message per failure (without the `FATAL: ` prefix); empty when startup may go on
 */
export function fatalRules(i: RuleInput): string[] {
  const { values: v, derived: d, command } = i;
  const errors: string[] = [];
  if (applies('adminSecret', command) && v.adminSecret === undefined) errors.push('--admin-secret is required and must not be empty');
  if (applies('clientId', command) && v.clientId === undefined) errors.push('--client-id is required');
  if (applies('clientSecret', command) && v.clientSecret === undefined) errors.push('--client-secret is required');

  if (applies('databaseType', command)) {
    if (!given(i, 'databaseType')) errors.push('--database-type is required');
    const connection = v.databaseUrl !== undefined || (v.databaseHost !== undefined && v.databaseName !== undefined);
    if (!connection) errors.push('a database connection is required: set --database-url, or --database-host with --database-name');
  }
  if (applies('jwtType', command)) {
    errors.push(...checkJwt(v, i.invalid.has('jwtType')));
    if (v.env !== 'development') errors.push(...shortHmacSecrets(v).map((m) => `${m} (or --env=development to start anyway)`));
  }

  const ports = ([['http-port', v.httpPort, 'httpPort'], ['grpc-port', v.grpcPort, 'grpcPort'], ['metrics-port', v.metricsPort, 'metricsPort']] as const)
    .filter(([, , key]) => !i.invalid.has(key));
  for (let a = 0; a < ports.length; a++) {
    for (let b = a + 1; b < ports.length; b++) {
      const [na, pa] = ports[a] as (typeof ports)[number];
      const [nb, pb] = ports[b] as (typeof ports)[number];
      // 0 asks the OS for a free port, so two zeros never collide.
      if (pa === pb && pa !== 0) errors.push(`--${na} (${pa}) and --${nb} (${pb}) must differ`);
    }
  }

  // issue 38 §0: workers keep their caches coherent through Redis (every receiver acknowledges a write's
  // notification before the write answers); without it a worker could answer from a stale cache
  if (applies('httpWorkers', command) && typeof v.httpWorkers === 'number' && v.httpWorkers > 1 && v.redisUrl === undefined) {
    errors.push(`--http-workers=${v.httpWorkers} needs --redis-url (the workers keep their caches coherent through it); use --http-workers=1, or auto, which is 1 without Redis`);
  }
  if (applies('httpWorkers', command) && (typeof v.httpWorkers === 'number' ? v.httpWorkers > 1 : v.redisUrl !== undefined) && v.fgaStore === 'memory') {
    errors.push('--http-workers above 1 cannot be used with --fga-store=memory (each worker would keep tuples of its own)');
  }

  if (!given(i, 'url')) errors.push('--url is required unless --env=development (for example --url=https://auth.example.com)');

  const smtp = '(--smtp-host, --smtp-port, --smtp-sender-email)';
  // issue 33 §4: under --env=development the development outbox stands in for a missing provider
  const email = d.isEmailConfigured || d.devOutbox.email;
  const sms = d.isSmsConfigured || d.devOutbox.sms;
  if (v.enableEmailVerification && !email) errors.push(`--enable-email-verification requires SMTP ${smtp}`);
  if (v.enableMagicLinkLogin && !email) errors.push(`--enable-magic-link-login requires SMTP ${smtp}`);
  if (v.enablePhoneVerification && !sms) {
    errors.push('--enable-phone-verification requires SMS (--twilio-account-sid, --twilio-api-key, --twilio-api-secret, --twilio-sender)');
  }
  for (const role of v.defaultRoles) {
    if (!v.roles.includes(role)) errors.push(`--default-roles must be a subset of --roles: "${role}" is not in --roles`);
  }
  if (v.enforceMfa) {
    const usable = usableMfaMethods(v, email, sms);
    if (!usable.totp && !usable.email && !usable.sms && !usable.webauthn) {
      errors.push('--enforce-mfa requires at least one usable MFA method');
    }
  }
  if (v.fgaStore !== undefined && SQL_FGA_STORES.has(v.fgaStore) && v.fgaStoreUrl === undefined) {
    errors.push(`--fga-store-url is required when --fga-store is ${v.fgaStore}`);
  }
  if (v.fgaStore === 'openfga' && v.fgaStoreUrl !== undefined && !/^https?:\/\/[^/\s]+/i.test(v.fgaStoreUrl)) {
    errors.push('--fga-store-url must be an http(s) URL when --fga-store is openfga');
  }
  if (applies('openfgaHttpPort', command) && (v.openfgaHttpPort !== undefined || v.openfgaGrpcPort !== undefined) && v.openfgaAuthnMethod === 'preshared' && (v.openfgaAuthnPresharedKeys ?? []).length === 0) {
    errors.push(`--openfga-authn-preshared-keys is required with ${v.openfgaHttpPort !== undefined ? '--openfga-http-port' : '--openfga-grpc-port'} (or set --openfga-authn-method=none for local development)`);
  }
  if (v.openfgaMaxTuplesPerWrite > 100) errors.push('--openfga-max-tuples-per-write must be at most 100 (the engine writes at most 100 tuples per call)');
  if (applies('customAccessTokenScript', command)) {
    const script = checkCustomScript(v.customAccessTokenScript);
    if (script !== null) errors.push(script);
  }
  if (command === 'gateway') {
    for (const key of GATEWAY_ROUTES) {
      if (!given(i, key)) errors.push(`${registry[key].flag.split(' ')[0]} is required for the gateway command`);
    }
  }
  const peer = PEER_ROUTES[command];
  if (peer && !given(i, peer)) errors.push(`${registry[peer].flag.split(' ')[0]} is required for the ${command} command`);
  return errors;
}

/** The warnings of behaviour.md §1.4 (plus a few for settings that silently do nothing). Logged at `warn`. */
export function warningRules(i: RuleInput): string[] {
  const { values: v } = i;
  const warnings: string[] = [];
  if (v.allowedOrigins.includes('*')) {
    // behaviour.md §2.5: with *, CSRF admits the same origin only; CORS answers * without credentials
    warnings.push('--allowed-origins is *: browsers may make state-changing calls only from the server\'s own origin (--url or the request\'s host), and CORS answers any origin without credentials; list the origins of your apps');
  }
  if (v.url?.startsWith('http:') && v.appCookieSecure) warnings.push('browsers will not store Secure cookies over http');
  if (v.adminSecret !== undefined && v.adminSecret.length < 32) {
    warnings.push('--admin-secret is shorter than 32 characters; use a long random value');
  }
  if (v.env === 'development') {
    warnings.push('--env=development is set; do not use it in production');
    if (applies('jwtType', i.command)) warnings.push(...shortHmacSecrets(v));
  }
  if (v.allowPrivateWebhookTargets) {
    warnings.push('--allow-private-webhook-targets is on: webhooks and test_endpoint may reach private networks');
  }
  if (v.appCookieSameSite === 'none' && !v.appCookieSecure) {
    warnings.push('--app-cookie-same-site=none without --app-cookie-secure: browsers drop SameSite=None cookies that are not Secure');
  }
  if (v.enforceMfa && v.disableMfa) warnings.push('--disable-mfa overrides --enforce-mfa: MFA is off');
  if (v.openfgaAuthnClientIds !== undefined && v.openfgaAuthnMethod !== 'oidc') warnings.push('--openfga-authn-client-ids is ignored without --openfga-authn-method=oidc');
  if ((v.openfgaHttpPort !== undefined || v.openfgaGrpcPort !== undefined) && v.openfgaAuthnMethod === 'none') {
    warnings.push('--openfga-authn-method=none: the OpenFGA API on --openfga-http-port accepts every caller, unauthenticated; use it for local development only');
  }
  if (v.fgaStoreUrl !== undefined && v.fgaStore === undefined) warnings.push('--fga-store-url is ignored without --fga-store');
  if (v.fgaStoreId !== undefined && v.fgaStore !== 'openfga') warnings.push('--fga-store-id is ignored without --fga-store=openfga');
  if (v.fgaStoreApiToken !== undefined && v.fgaStore !== 'openfga') warnings.push('--fga-store-api-token is ignored without --fga-store=openfga');
  for (const p of SOCIAL_PROVIDERS) {
    const { id, secret } = clientOf(v, p);
    if ((id === undefined) !== (secret === undefined)) {
      warnings.push(`--${p}-client-id and --${p}-client-secret must both be set; ${p} login stays off`);
    }
  }
  return warnings;
}
