/**
 * @module scripts/gen-chart-flags
 * Writes charts/gatehouse/files/flags.json from the flag registry (`listFlags`, STYLE §5) and the
 * service registry (services/registry.ts, issue 14 §4): every flag by its Config key (kebab name,
 * type, secret); per command, the keys that command accepts; and the services: the chart's
 * components, those the gateway routes to, the peers each calls, those with a gRPC listener and
 * what each cannot work without. The chart's templates read it (`.Files.Get` + `fromJson`) so a
 * container only gets the flags its command accepts (the binary refuses unknown flags), secret flags
 * only arrive via `$(VAR)`, rendering fails when a service lacks what it needs, and a service added
 * to the registry gets its Deployment and Service without a template edit. It also writes
 * charts/gatehouse/values.schema.json (issue 15): value types from the same registry and the values
 * no deployment works without, so `helm lint` fails on them.
 *
 * Run: `npx node scripts/gen-chart-flags.ts` (writes both files) or `--check` (exit 1 when stale).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, listFlags } from '@gatehouse/config';
import { SERVICES } from '../services/registry.ts';

/** Where the chart expects the generated allow-lists. */
export const FLAGS_JSON = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../charts/gatehouse/files/flags.json');
/** The chart's values schema (helm lint, template and install validate values against it). */
export const SCHEMA_JSON = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../charts/gatehouse/values.schema.json');

/** One flag as the chart sees it. */
export interface ChartFlag {
  /** kebab name with dashes, e.g. `--http-port` */
  readonly flag: string;
  /** `string`, `number`, `boolean` or `list` (lists render comma-joined) */
  readonly type: string;
  /** must come from a Kubernetes Secret through `$(VAR)` expansion, never a plain arg */
  readonly secret: boolean;
}

/** The services as the chart deploys them (from services/registry.ts). */
export interface ChartServices {
  /** every Deployment + Service, the gateway first, then the registry's order */
  readonly components: readonly string[];
  /** the services the gateway routes to (a public API): `--<name>-address`, `--<name>-graphql-url` */
  readonly routed: readonly string[];
  /** service → the peers whose internal API it calls (`--<peer>-address`) */
  readonly calls: Readonly<Record<string, readonly string[]>>;
  /** the components with a gRPC listener (a public or internal API; the gateway): the others get no gRPC port */
  readonly grpc: readonly string[];
  /** service → Config key → why it cannot work without it in split mode (the chart fails rendering without it) */
  readonly requires: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** The file's shape: `flags` by Config key, `commands` → accepted keys (registry order), `services`. */
export interface ChartFlags {
  readonly generatedBy: string;
  readonly flags: Readonly<Record<string, ChartFlag>>;
  readonly commands: Readonly<Record<string, readonly string[]>>;
  readonly services: ChartServices;
}

const SESSIONS_WHY = 'callers\' sessions are shared through Redis in split mode (authn writes them, the other services check callers against them)';
const OUTBOX_WHY = 'its outbox relay publishes events to NATS JetStream; without it events (and the emails they trigger) wait in the outbox';

/**
 * What a split deployment cannot work without, beyond each module's own `requires` (which stop the
 * process): every service with a public API checks callers against the Redis session store (mfa's
 * signed-in RPCs answer 401 without it), and the services with an outbox (authn, mfa) publish to NATS.
 */
function chartRequires(): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const m of SERVICES) {
    const keys: Record<string, string> = {};
    if (m.publicApi) keys.redisUrl = SESSIONS_WHY;
    if (m.name === 'authn' || m.name === 'mfa') keys.natsUrl = OUTBOX_WHY;
    for (const r of m.requires ?? []) keys[r.key] = r.why;
    if (Object.keys(keys).length > 0) out[m.name] = keys;
  }
  return out;
}

/** The chart's view of the service registry; pure. */
export function chartServices(): ChartServices {
  return {
    components: ['gateway', ...SERVICES.map((m) => m.name)],
    routed: SERVICES.filter((m) => m.publicApi).map((m) => m.name),
    calls: Object.fromEntries(SERVICES.filter((m) => m.calls.length > 0).map((m) => [m.name, m.calls.map((api) => api.split('.')[0]!)])),
    grpc: ['gateway', ...SERVICES.filter((m) => m.publicApi || m.internalApi).map((m) => m.name)],
    requires: chartRequires(),
  };
}

/** Builds the allow-lists from the registry; pure. */
export function chartFlags(): ChartFlags {
  const flags: Record<string, ChartFlag> = {};
  const commands: Record<string, string[]> = {};
  for (const command of COMMANDS) {
    if (command === 'all') continue; // the chart runs split mode only
    const infos = listFlags(command);
    commands[command] = infos.map((f) => f.key);
    for (const f of infos) flags[f.key] = { flag: f.flag, type: f.type, secret: f.secret };
  }
  return { generatedBy: 'scripts/gen-chart-flags.ts (npx node scripts/gen-chart-flags.ts); do not edit', flags, commands, services: chartServices() };
}

/** The file's exact text (stable: 2-space JSON plus a trailing newline). */
export function chartFlagsText(): string {
  return `${JSON.stringify(chartFlags(), null, 2)}\n`;
}

type Schema = Record<string, unknown>;
const obj = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({ type: 'object', properties, additionalProperties: false, ...extra });
const VALUE_TYPES: Readonly<Record<string, Schema>> = {
  string: { type: ['string', 'null'] },
  number: { type: ['integer', 'null'] },
  boolean: { type: ['boolean', 'null'] },
  list: { type: ['array', 'string', 'null'], items: { type: ['string', 'integer'] } },
};
const kebab = (meta: ChartFlags, key: string): string => meta.flags[key]!.flag.slice(2);
/** The Secret holds `key`: a non-empty secrets.values entry, or listed in secrets.keys of an existingSecret. */
const inSecret = (meta: ChartFlags, key: string): Schema => ({
  anyOf: [
    { properties: { secrets: { properties: { values: { required: [key], properties: { [key]: { type: 'string', minLength: 1 } } } } } } },
    { properties: { secrets: { required: ['existingSecret', 'keys'], properties: { existingSecret: { minLength: 1 }, keys: { contains: { const: kebab(meta, key) } } } } } },
  ],
});
/** config.<section>.<key> is a non-empty value. */
const inConfig = (section: string, key: string): Schema => ({
  properties: { config: { required: [section], properties: { [section]: { required: [key], properties: { [key]: { type: 'string', minLength: 1 } } } } } },
});
const disabled = (svc: string): Schema => ({ properties: { services: { properties: { [svc]: { properties: { enabled: { const: false } } } } } } });

/**
 * values.schema.json: the type of every value (config.* keys and types from the flag registry, so a
 * misspelt or mistyped flag fails `helm lint`), and the values no deployment works without (the
 * templates' `fail` checks the same, more precisely, with longer messages; `helm lint` runs templates
 * with `fail` turned into an info line, so only the schema makes lint fail).
 */
export function chartSchema(meta: ChartFlags = chartFlags()): Schema {
  const flagProps = Object.fromEntries(Object.entries(meta.flags).map(([key, f]) => [key, VALUE_TYPES[f.type] ?? {}]));
  const flagsObj = (extra: Schema = {}): Schema => ({ type: ['object', 'null'], properties: flagProps, additionalProperties: false, ...extra });
  const secretKeys = Object.entries(meta.flags).filter(([, f]) => f.secret).map(([key]) => key);
  const components = meta.services.components;
  const port = { type: 'integer', minimum: 1, maximum: 65535 };
  const resources = { type: 'object' };
  const service = obj({
    enabled: { type: 'boolean' },
    replicaCount: { type: 'integer', minimum: 0 },
    serviceType: { enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] },
    headless: { type: 'boolean' },
    autoscaling: obj({
      enabled: { type: 'boolean' },
      minReplicas: { type: 'integer', minimum: 1 },
      maxReplicas: { type: 'integer', minimum: 1 },
      targetCPUUtilizationPercentage: { type: 'integer', minimum: 1, maximum: 100 },
    }),
    resources,
  });
  const needing = (key: string): string[] => components.filter((c) => meta.services.requires[c]?.[key] !== undefined);
  const somewhere = (key: string): Schema => ({
    anyOf: [inSecret(meta, key), ...['shared', ...components].map((section) => inConfig(section, key)), { allOf: needing(key).map(disabled) }],
  });
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'charts/gatehouse values (generated by scripts/gen-chart-flags.ts; do not edit)',
    type: 'object',
    properties: {
      image: obj({ repository: { type: 'string', minLength: 1 }, tag: { type: 'string' }, pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] } }),
      imagePullSecrets: { type: 'array' },
      fullnameOverride: { type: 'string' },
      ports: obj({ http: port, grpc: port, metrics: port }, { required: ['http', 'grpc', 'metrics'] }),
      openfgaApi: obj({ enabled: { type: 'boolean' }, port, grpcPort: port, gateway: { type: 'boolean' } }),
      config: obj({
        shared: flagsObj({ type: 'object', required: ['url'], properties: { ...flagProps, url: { type: 'string', minLength: 1, pattern: '^https?://' } } }),
        ...Object.fromEntries(components.map((c) => [c, flagsObj()])),
      }),
      secrets: obj({
        existingSecret: { type: 'string' },
        keys: { type: 'array', items: { enum: secretKeys.map((k) => kebab(meta, k)) } },
        values: { type: ['object', 'null'], properties: Object.fromEntries(secretKeys.map((k) => [k, { type: ['string', 'null'] }])), additionalProperties: false },
      }),
      services: obj(Object.fromEntries(components.map((c) => [c, service]))),
      podDisruptionBudget: obj({ enabled: { type: 'boolean' }, minAvailable: { type: ['integer', 'string'] } }),
      spread: obj({ enabled: { type: 'boolean' }, topologyKeys: { type: 'array', items: { type: 'string', minLength: 1 } } }),
      metrics: obj({ scrape: { type: 'boolean' } }),
      ingress: obj({
        enabled: { type: 'boolean' },
        className: { type: 'string' },
        annotations: { type: 'object' },
        hosts: { type: 'array', items: { type: 'string', minLength: 1 } },
        tls: { type: 'array' },
        grpc: obj({
          enabled: { type: 'boolean' },
          host: { type: 'string' },
          className: { type: 'string' },
          annotations: { type: 'object' },
          authzDirect: { type: 'boolean' },
          tls: { type: 'array' },
        }),
      }),
      serviceAccount: obj({ create: { type: 'boolean' }, name: { type: 'string' }, annotations: { type: 'object' }, automountToken: { type: 'boolean' } }),
      networkPolicy: obj({
        enabled: { type: 'boolean' },
        gatewayFrom: { type: 'array' },
        metricsFrom: { type: 'array' },
        openfgaFrom: { type: 'array' },
      }),
      podAnnotations: { type: 'object' },
      podLabels: { type: 'object' },
      nodeSelector: { type: 'object' },
      tolerations: { type: 'array' },
      affinity: { type: 'object' },
      terminationGracePeriodSeconds: { type: 'integer', minimum: 0 },
      preStopSleepSeconds: { type: 'integer', minimum: 0 },
      podSecurityContext: { type: 'object' },
      securityContext: { type: 'object' },
      probes: obj({ startup: { type: 'object' }, readiness: { type: 'object' }, liveness: { type: 'object' } }),
    },
    additionalProperties: false,
    required: ['config', 'secrets', 'ports'],
    allOf: [
      inSecret(meta, 'adminSecret'),
      inSecret(meta, 'clientSecret'),
      { anyOf: [inSecret(meta, 'jwtSecret'), inSecret(meta, 'jwtPrivateKey')] },
      { anyOf: [inSecret(meta, 'databaseUrl'), inConfig('shared', 'databaseHost')] },
      somewhere('redisUrl'),
      somewhere('natsUrl'),
    ],
  };
}

/** values.schema.json's exact text. */
export function chartSchemaText(): string {
  return `${JSON.stringify(chartSchema(), null, 2)}\n`;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const [file, text] of [[FLAGS_JSON, chartFlagsText()], [SCHEMA_JSON, chartSchemaText()]] as const) {
    if (process.argv.includes('--check')) {
      let current = '';
      try { current = readFileSync(file, 'utf8'); } catch { /* missing counts as stale */ }
      if (current !== text) {
        process.stderr.write(`${path.relative(process.cwd(), file)} is stale: run npx node scripts/gen-chart-flags.ts\n`);
        process.exit(1);
      }
    } else {
      writeFileSync(file, text);
      process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    }
  }
}
