/**
 * @module test/charts/chart.test
 * charts/gatehouse renders what ARCHITECTURE §7 and STYLE §5 ask: one Deployment + Service per
 * enabled service, an authz HPA, flags as container args (each only for the commands that accept
 * it), secrets only as files of a read-only Secret volume read through `--flag=file:<path>` (issue 37
 * §5: no secret in args, env or the process list), and args every command's own parser accepts.
 */
import { describe, it, expect, beforeAll } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { loadConfig, type CommandName } from '@gatehouse/config';
import { FLAGS_JSON, SCHEMA_JSON, chartFlags, chartFlagsText, chartSchemaText } from '../../scripts/gen-chart-flags.ts';
import { CHART, EXAMPLE_VALUES, SECRET_DIR, containerOf, deployments, helm, helmMajor, mountedSecretKeys, podSecretFiles, readmeInstallSets, schemaPath, renderChart, requireHelm, template, type K8sObject } from './helm.ts';
import { SERVICES as REGISTRY } from '../../services/registry.ts';
import { SERVICE_NAMES } from '@gatehouse/contracts/service-names';

const meta = chartFlags();
// the chart deploys the gateway and every service of the registry (issue 14 §4: the registry drives the chart)
const SERVICES = ['gateway', ...REGISTRY.map((m) => m.name)].sort();

/** The rendered Secret's data, decoded, by Secret key. */
function secretData(objects: readonly K8sObject[]): Record<string, string> {
  const secret = objects.find((o) => o.kind === 'Secret');
  if (!secret) throw new Error('no Secret rendered');
  return Object.fromEntries(Object.entries(secret.data as Record<string, string>)
    .map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}


const argValue = (args: readonly string[], flag: string): string | undefined =>
  args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);

describe('charts/gatehouse', () => {
  let objects: K8sObject[];
  beforeAll(() => {
    requireHelm();
    objects = renderChart('rel', [EXAMPLE_VALUES]);
  });

  it('files/flags.json is what scripts/gen-chart-flags.ts generates from the registry', () => {
    expect(readFileSync(FLAGS_JSON, 'utf8')).toBe(chartFlagsText());
    expect(meta.commands.notifications).not.toContain('jwtType');
    expect(meta.commands.gateway).toContain('authzAddress');
  });

  it('files/flags.json and values.schema.json are what scripts/gen-chart-flags.ts generates', () => {
    expect(readFileSync(SCHEMA_JSON, 'utf8')).toBe(chartSchemaText());
  });

  it('passes helm lint --strict with the example values, and fails it with the defaults (no URL, no secrets)', () => {
    const ok = helm(['lint', CHART, '--strict', '-f', EXAMPLE_VALUES]);
    expect(ok.stderr + ok.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    expect(ok.ok).toBe(true);
    // helm lint runs the templates with `fail` turned into an INFO line: only the schema makes it fail
    const bare = helm(['lint', CHART, '--strict']);
    expect(bare.ok).toBe(false);
    expect(bare.stderr + bare.stdout).toContain('1 chart(s) linted, 1 chart(s) failed');
    expect(bare.stdout).toContain(schemaPath('config.shared.url'));
    // helm 4 names what each unmet anyOf misses (helm 3's validator does not)
    if (helmMajor() >= 4) {
      for (const key of ['adminSecret', 'clientSecret', 'jwtSecret', 'databaseUrl', 'redisUrl', 'natsUrl']) {
        expect(bare.stdout).toContain(`missing property '${key}'`);
      }
    }
  });

  it('fails helm lint on a mistyped or misspelt value', () => {
    const typed = helm(['lint', CHART, '--strict', '-f', EXAMPLE_VALUES, '--set', 'config.shared.smtpPort=abc', '--set', 'services.authz.replicaCount=two']);
    expect(typed.ok).toBe(false);
    expect(typed.stdout).toContain(schemaPath('config.shared.smtpPort'));
    expect(typed.stdout).toContain(schemaPath('services.authz.replicaCount'));
    const spelt = helm(['lint', CHART, '--strict', '-f', EXAMPLE_VALUES, '--set', 'config.shared.jwtTipe=HS256']);
    expect(spelt.ok).toBe(false);
    expect(spelt.stdout).toMatch(/additional propert(y|ies) '?jwtTipe'? (is )?not allowed/i);
  });

  it('renders one Deployment and one Service per enabled service, headless Services for the gRPC peers and the authz HPA', () => {
    expect([...deployments(objects).keys()].sort()).toEqual(SERVICES);
    const services = objects.filter((o) => o.kind === 'Service');
    expect(services.map((s) => s.metadata.name).sort()).toEqual(SERVICES.map((s) => `rel-${s}`));
    // every service called over gRPC resolves to its pods, so grpc-js balances over them (README)
    const headless = services.filter((s) => s.spec.clusterIP === 'None').map((s) => s.metadata.name).sort();
    expect(headless).toEqual(['rel-admin', 'rel-authn', 'rel-authz', 'rel-mfa', 'rel-orgs']);
    const gw = services.find((s) => s.metadata.name === 'rel-gateway')!;
    expect(gw.spec.ports.map((p: any) => [p.name, p.port])).toEqual([['http', 8080], ['grpc', 9091], ['metrics', 8081]]);
    // `gatehouse notifications` serves no gRPC API (no listener): no gRPC port anywhere for it
    const notif = services.find((s) => s.metadata.name === 'rel-notifications')!;
    expect(notif.spec.ports.map((p: any) => [p.name, p.port])).toEqual([['http', 8080], ['metrics', 8081]]);
    const hpas = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler');
    expect(hpas).toHaveLength(1);
    expect(hpas[0]!.apiVersion).toBe('autoscaling/v2');
    expect(hpas[0]!.spec).toMatchObject({
      scaleTargetRef: { kind: 'Deployment', name: 'rel-authz' }, minReplicas: 2, maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
    });
    expect(deployments(objects).get('authz')!.spec.replicas).toBeUndefined(); // the HPA owns it
    // a PDB for every service with 2+ replicas; notifications runs one (see the PDB test below)
    expect(objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name).sort())
      .toEqual(SERVICES.filter((n) => n !== 'notifications').map((n) => `rel-${n}`));
  });

  it('mounts the Secret read-only as files and passes each secret flag as file:<path>, never an env var', () => {
    for (const [name, d] of deployments(objects)) {
      const c = containerOf(d);
      expect({ name, env: c.env, envFrom: c.envFrom }).toEqual({ name, env: undefined, envFrom: undefined });
      expect(c.args[0]).toBe(name);
      const volume = d.spec.template.spec.volumes.find((v: any) => v.name === 'secrets');
      expect(volume.secret).toMatchObject({ secretName: 'rel-secrets', defaultMode: 0o440 });
      expect(c.volumeMounts).toContainEqual({ name: 'secrets', mountPath: SECRET_DIR, readOnly: true });
      // the root file system stays read-only: the mount is the one way secrets arrive
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      const fileArgs = c.args.filter((a) => a.includes('=file:')).map((a) => a.split('=file:'));
      // each projected key is read by exactly one flag, named after it
      expect(fileArgs.map(([flag, file]) => [flag, file])).toEqual(mountedSecretKeys(d).map((k) => [`--${k}`, `${SECRET_DIR}/${k}`]));
    }
  });

  it('never puts a secret value in container args or env: secret flags are file: paths', () => {
    const data = secretData(objects);
    expect(Object.keys(data).length).toBeGreaterThanOrEqual(6);
    for (const d of deployments(objects).values()) {
      const c = containerOf(d);
      for (const arg of c.args.slice(1)) {
        const [flag, ...rest] = arg.split('=');
        const value = rest.join('=');
        const info = Object.values(meta.flags).find((f) => f.flag === flag);
        expect(info).toBeDefined();
        if (!info!.secret) continue;
        // a credential-free NATS/Redis URL may be a plain value; everything else comes from the Secret
        if ((flag === '--nats-url' || flag === '--redis-url') && !value.includes('@')) continue;
        expect(value).toBe(`file:${SECRET_DIR}/${flag!.slice(2)}`);
      }
      const visible = JSON.stringify({ args: c.args, env: c.env ?? [], envFrom: c.envFrom ?? [] });
      for (const secret of Object.values(data)) expect(visible).not.toContain(secret);
    }
  });

  it('renders args that each command parses without errors, reading its secrets from the mounted files', () => {
    const data = secretData(objects);
    for (const [name, d] of deployments(objects)) {
      const c = containerOf(d);
      const result = loadConfig(name as CommandName, c.args.slice(1), { readFile: podSecretFiles(d, data) });
      expect({ name, errors: result.errors }).toEqual({ name, errors: [] });
      expect(result.config!.adminSecret).toBe(name === 'notifications' ? undefined : data['admin-secret']);
      expect(result.config!.clientSecret).toBe(data['client-secret']);
      expect(result.config!.metricsHost).toBe('0.0.0.0');
      expect(result.config!.host).toBe('0.0.0.0');
    }
  });

  it('renders a flag only for the commands that accept it, per-command values over shared ones', () => {
    const args = (n: string) => containerOf(deployments(objects).get(n)!).args;
    expect(argValue(args('authn'), '--jwt-type')).toBe('HS256');
    expect(argValue(args('notifications'), '--jwt-type')).toBeUndefined();
    expect(argValue(args('gateway'), '--database-type')).toBeUndefined();
    expect(argValue(args('gateway'), '--database-url')).toBeUndefined();
    expect(argValue(args('authz'), '--log-level')).toBe('warn');
    expect(argValue(args('authn'), '--log-level')).toBe('info');
    expect(argValue(args('gateway'), '--rate-limit-rps')).toBe('50');
    expect(argValue(args('authn'), '--refresh-token-expires-in')).toBe('2592000');
    expect(argValue(args('authn'), '--allowed-origins')).toBe('https://app.example.com,https://admin.example.com');
    expect(argValue(args('gateway'), '--url')).toBe('https://auth.example.com');
  });

  it('gives each service only the secrets its command takes: notifications no admin secret, authz no encryption key', () => {
    const secretsOf = (n: string) => mountedSecretKeys(deployments(objects).get(n)!).sort();
    // notifications keeps client-secret: its internal token calls admin's internal API (webhook targets, templates);
    // it takes the encryption key to open the sealed links and codes authn and mfa put in jobs (issue 23)
    expect(secretsOf('notifications')).toEqual(['client-secret', 'database-url', 'encryption-key', 'smtp-password']);
    expect(secretsOf('authz')).toEqual(['admin-secret', 'client-secret', 'database-url', 'jwt-secret', 'redis-url']);
    expect(secretsOf('gateway')).toEqual(['admin-secret', 'client-secret', 'redis-url']);
    expect(secretsOf('mfa')).toContain('encryption-key');
    expect(secretsOf('authn')).toContain('encryption-key');
    expect(secretsOf('authn')).not.toContain('smtp-password');
    for (const [name, d] of deployments(objects)) {
      for (const arg of containerOf(d).args.slice(1)) {
        const key = Object.entries(meta.flags).find(([, f]) => f.flag === arg.split('=')[0])![0];
        expect({ name, key, accepted: meta.commands[name]!.includes(key) }).toEqual({ name, key, accepted: true });
      }
    }
    const notifications = containerOf(deployments(objects).get('notifications')!).args;
    for (const flag of ['--client-id', '--redis-url', '--jwt-type']) expect(argValue(notifications, flag)).toBeUndefined();
  });

  it('says in its README which services get the encryption key and the admin secret, as rendered (issue 37 §5)', () => {
    const readme = readFileSync(`${CHART}/README.md`, 'utf8').replace(/\s+/g, ' ');
    /** The services a README phrase lists: "authn, mfa, orgs and notifications" → sorted names. */
    const listed = (phrase: string): string[] => phrase.replace(/\bthe /g, '').split(/, | and | or /).map((x) => x.trim()).sort();
    const holding = (key: string): string[] => [...deployments(objects)].filter(([, d]) => mountedSecretKeys(d).includes(key)).map(([n]) => n).sort();
    const enc = /`encryption-key` for ([a-z, ]+?) \(.*?\), not ([a-z, ]+?);/.exec(readme);
    expect(enc).not.toBeNull();
    expect(listed(enc![1]!)).toEqual(holding('encryption-key'));
    expect(listed(enc![2]!)).toEqual(SERVICES.filter((n) => !holding('encryption-key').includes(n)));
    const admin = /`admin-secret` and `redis-url` not for ([a-z]+)/.exec(readme);
    expect(SERVICES.filter((n) => !holding('admin-secret').includes(n))).toEqual([admin![1]]);
    expect(SERVICES.filter((n) => !holding('redis-url').includes(n))).toEqual([admin![1]]);
  });

  it('points the gateway at the Services by DNS name: gRPC and GraphQL subgraph URLs', () => {
    const { args } = containerOf(deployments(objects).get('gateway')!);
    expect(argValue(args, '--authn-address')).toBe('rel-authn:9091');
    expect(argValue(args, '--authz-address')).toBe('rel-authz:9091');
    expect(argValue(args, '--authn-graphql-url')).toBe('http://rel-authn:8080/graphql');
    expect(argValue(args, '--authz-graphql-url')).toBe('http://rel-authz:8080/graphql');
    expect(argValue(args, '--mfa-address')).toBe('rel-mfa:9091');
    expect(argValue(args, '--mfa-graphql-url')).toBe('http://rel-mfa:8080/graphql');
    expect(argValue(args, '--admin-address')).toBe('rel-admin:9091');
    expect(argValue(args, '--orgs-graphql-url')).toBe('http://rel-orgs:8080/graphql');
    // notifications has no API the gateway routes to
    expect(args.filter((a) => a.startsWith('--notifications-'))).toEqual([]);
  });

  it('points authn at mfa\'s gRPC Service for its internal API, and mfa at no one (calls go one way)', () => {
    const authn = containerOf(deployments(objects).get('authn')!).args;
    const mfa = containerOf(deployments(objects).get('mfa')!).args;
    expect(argValue(authn, '--mfa-address')).toBe('rel-mfa:9091');
    expect(argValue(mfa, '--authn-address')).toBeUndefined();
    expect(argValue(authn, '--authn-graphql-url')).toBeUndefined();
  });

  it('annotates pods for Prometheus; startup and liveness probe GET /healthz, readiness GET /readyz', () => {
    for (const d of deployments(objects).values()) {
      const pod = d.spec.template;
      expect(pod.metadata.annotations).toMatchObject({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8081' });
      const c = containerOf(d);
      const grpc = c.args[0] === 'notifications' ? [] : [['grpc', 9091]];
      expect(c.ports.map((p: any) => [p.name, p.containerPort])).toEqual([['http', 8080], ...grpc, ['metrics', 8081]]);
      expect(argValue(c.args, '--grpc-port')).toBe(c.args[0] === 'notifications' ? undefined : '9091');
      for (const probe of [c.startupProbe, c.livenessProbe]) expect(probe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(c.startupProbe.failureThreshold * c.startupProbe.periodSeconds).toBeGreaterThanOrEqual(120);
      expect(argValue(c.args, '--metrics-port')).toBe('8081');
    }
  });
});

describe('charts/gatehouse values', () => {
  beforeAll(requireHelm);
  let rendered: K8sObject[] | undefined;
  const objects0 = (): K8sObject[] => (rendered ??= renderChart('rel', [EXAMPLE_VALUES]));

  it('fails rendering with a clear message when --url is missing', () => {
    const run = template('rel', [EXAMPLE_VALUES], { config: { shared: { url: '' } } });
    expect(run.ok).toBe(false);
    expect(run.stderr).toContain(schemaPath('config.shared.url'));
    const unchecked = template('rel', [EXAMPLE_VALUES], { config: { shared: { url: '' } } }, ['--skip-schema-validation']);
    expect(unchecked.stderr).toContain('config.shared.url is required');
  });

  it('refuses an unknown flag key, a chart-managed flag and a secret given as a plain value', () => {
    const unknown = template('rel', [EXAMPLE_VALUES], { config: { shared: { jwtTipe: 'HS256' } } }, ['--skip-schema-validation']);
    expect(unknown.stderr).toContain('config.shared.jwtTipe is not a gatehouse flag key');
    const managed = template('rel', [EXAMPLE_VALUES], { config: { gateway: { httpPort: 80 } } });
    expect(managed.stderr).toContain('httpPort (--http-port) is set by the chart');
    const plain = template('rel', [EXAMPLE_VALUES], { config: { shared: { jwtSecret: 'oops' } } });
    expect(plain.stderr).toContain('jwtSecret (--jwt-secret) is a secret flag');
    const redis = template('rel', [EXAMPLE_VALUES], { config: { shared: { redisUrl: 'redis://:pw@redis:6379' } } });
    expect(redis.stderr).toContain('redisUrl (--redis-url) is a secret flag');
    const noAdmin = template('rel', [EXAMPLE_VALUES], { secrets: { values: { adminSecret: null } } }, ['--skip-schema-validation']);
    expect(noAdmin.stderr).toContain('secrets: adminSecret is required');
  });

  it('refuses to render without what a deployment needs: the schema names the value, the templates say why', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ secrets: { values: { jwtSecret: null } } }, "'/secrets/values/jwtSecret'", 'authn signs or verifies tokens with jwtType HS256: set secrets.values.jwtSecret'],
      // the schema takes either key; the template knows which one jwtType needs
      [{ config: { shared: { jwtType: 'RS256' } } }, 'with jwtType RS256', 'authn signs or verifies tokens with jwtType RS256: set secrets.values.jwtPrivateKey'],
      [{ secrets: { values: { databaseUrl: null } } }, "'/secrets/values/databaseUrl'", 'needs a database: set secrets.values.databaseUrl'],
      [{ secrets: { values: { redisUrl: null } } }, "'/secrets/values/redisUrl'", 'authn needs --redis-url: callers\' sessions are shared through Redis'],
      [{ config: { shared: { natsUrl: null } } }, "missing property 'natsUrl'", 'notifications needs --nats-url: the worker consumes delivery jobs from NATS JetStream'],
    ];
    for (const [values, schemaSays, templateSays] of cases) {
      const run = template('rel', [EXAMPLE_VALUES], values);
      // the schema refuses first where it can (helm 3's validator words it without the property's name)
      expect({ values, ok: run.ok }).toEqual({ values, ok: false });
      if (helmMajor() >= 4) expect(run.stderr).toContain(schemaSays);
      const unchecked = template('rel', [EXAMPLE_VALUES], values, ['--skip-schema-validation']);
      expect(unchecked.stderr).toContain(templateSays);
    }
    // without the worker, authn still needs NATS for its outbox
    const noWorker = template('rel', [EXAMPLE_VALUES], { config: { shared: { natsUrl: null } }, services: { notifications: { enabled: false } } }, ['--skip-schema-validation']);
    expect(noWorker.stderr).toContain('authn needs --nats-url: its outbox relay publishes events to NATS JetStream');
  });

  it('renders the README install command as written', () => {
    const sets = readmeInstallSets().flatMap(([k, v]) => ['--set', `${k}=${v}`]);
    expect(sets.length).toBeGreaterThan(8);
    const lint = helm(['lint', CHART, '--strict', ...sets]);
    expect(lint.stdout).toContain('0 chart(s) failed');
    const run = template('gh', [], undefined, sets);
    expect(run.stderr).toBe('');
    expect(run.ok).toBe(true);
    // the README's values table: every service on by default, admin and orgs included
    expect([...deployments(renderChart('gh', [], undefined, sets)).keys()].sort()).toEqual(SERVICES);
    expect(readFileSync(`${CHART}/README.md`, 'utf8')).toContain('| `services.<svc>.enabled` | all seven on');
  });

  it('renders the optional Ingress, ServiceAccount and NetworkPolicies only when asked', () => {
    const kinds = (o: readonly K8sObject[]) => o.map((x) => x.kind);
    for (const kind of ['Ingress', 'ServiceAccount', 'NetworkPolicy']) expect(kinds(objects0())).not.toContain(kind);
    const on = renderChart('rel', [EXAMPLE_VALUES], {
      ingress: { enabled: true, className: 'nginx', hosts: ['auth.example.com'], tls: [{ secretName: 'auth-tls', hosts: ['auth.example.com'] }] },
      serviceAccount: { create: true },
      networkPolicy: { enabled: true, metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] },
    });
    const ingress = on.find((o) => o.kind === 'Ingress')!;
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ secretName: 'auth-tls', hosts: ['auth.example.com'] }],
      rules: [{ host: 'auth.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'rel-gateway', port: { name: 'http' } } } }] } }],
    });
    const sa = on.find((o) => o.kind === 'ServiceAccount')!;
    expect(sa.metadata.name).toBe('rel');
    expect(sa.automountServiceAccountToken).toBe(false);
    for (const d of deployments(on).values()) expect(d.spec.template.spec.serviceAccountName).toBe('rel');

    const policies = new Map(on.filter((o) => o.kind === 'NetworkPolicy').map((p) => [p.metadata.labels['app.kubernetes.io/component'], p.spec]));
    expect([...policies.keys()].sort()).toEqual(SERVICES);
    const component = (c: string) => ({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gatehouse', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': c } } });
    const ports = (...names: string[]) => names.map((port) => ({ port, protocol: 'TCP' }));
    const metrics = { ports: ports('metrics'), from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }] };
    expect(policies.get('gateway')).toMatchObject({ policyTypes: ['Ingress'], ingress: [{ ports: ports('http', 'grpc') }, metrics] });
    expect(policies.get('gateway').ingress[0].from).toBeUndefined(); // the public entry point
    // mfa: the gateway, and authn for its internal API (services/registry.ts: authn calls mfa.internal)
    expect(policies.get('mfa').ingress).toEqual([
      { ports: ports('http', 'grpc'), from: [component('gateway')] },
      { ports: ports('grpc'), from: [component('authn')] },
      metrics,
    ]);
    // authz: the gateway, and orgs for its internal API (SCIM groups as tuples: orgs calls authz.internal)
    expect(policies.get('authz').ingress).toEqual([
      { ports: ports('http', 'grpc'), from: [component('gateway')] },
      { ports: ports('grpc'), from: [component('orgs')] },
      metrics,
    ]);
    // notifications serves no API: only scraping
    expect(policies.get('notifications').ingress).toEqual([metrics]);
    const noHosts = template('rel', [EXAMPLE_VALUES], { ingress: { enabled: true } }, ['--skip-schema-validation']);
    expect(noHosts.stderr).toContain('ingress.hosts is required with ingress.enabled');
  });

  it('renders no admin/orgs objects and no routes to them while disabled, and routes the gateway to them when enabled; mfa can be switched off', () => {
    const off = renderChart('rel', [EXAMPLE_VALUES], { services: { admin: { enabled: false }, orgs: { enabled: false } } });
    expect(off.filter((o) => /-(admin|orgs)$/.test(o.metadata.name))).toEqual([]);
    expect(argValue(containerOf(deployments(off).get('gateway')!).args, '--admin-address')).toBeUndefined();
    const on = renderChart('rel', [EXAMPLE_VALUES], { services: { orgs: { enabled: false } } });
    expect([...deployments(on).keys()].sort()).toEqual([...SERVICE_NAMES, 'gateway'].filter((n) => n !== 'orgs').sort());
    const gw = containerOf(deployments(on).get('gateway')!).args;
    expect(argValue(gw, '--admin-address')).toBe('rel-admin:9091');
    expect(argValue(gw, '--admin-graphql-url')).toBe('http://rel-admin:8080/graphql');
    const noMfa = renderChart('rel', [EXAMPLE_VALUES], { services: { mfa: { enabled: false } } });
    expect(argValue(containerOf(deployments(noMfa).get('authn')!).args, '--mfa-address')).toBeUndefined();
  });

  it('uses an existing Secret: no Secret object, mounts it with the listed keys only', () => {
    const objects = renderChart('rel', [EXAMPLE_VALUES], {
      secrets: { existingSecret: 'prod-gatehouse', keys: ['admin-secret', 'client-secret', 'jwt-secret', 'database-url', 'redis-url'] },
    });
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const authnDeployment = deployments(objects).get('authn')!;
    const authn = containerOf(authnDeployment);
    expect(authnDeployment.spec.template.spec.volumes.find((v: any) => v.name === 'secrets').secret.secretName).toBe('prod-gatehouse');
    expect(mountedSecretKeys(authnDeployment)).toEqual(['admin-secret', 'client-secret', 'jwt-secret', 'database-url', 'redis-url']);
    expect(argValue(authn.args, '--admin-secret')).toBe(`file:${SECRET_DIR}/admin-secret`);
    expect(argValue(authn.args, '--encryption-key')).toBeUndefined();
    expect(mountedSecretKeys(deployments(objects).get('gateway')!)).toEqual(['admin-secret', 'client-secret', 'redis-url']);
    const badValues = { secrets: { existingSecret: 's', keys: ['admin-secret', 'client-secret', 'nope'] } };
    expect(template('rel', [EXAMPLE_VALUES], badValues).stderr).toContain(schemaPath('secrets.keys.2'));
    const bad = template('rel', [EXAMPLE_VALUES], badValues, ['--skip-schema-validation']);
    expect(bad.stderr).toContain('secrets.keys: "nope" is not a gatehouse flag');
  });

  it('renders PodDisruptionBudgets only where they can let a drain through: 2+ replicas, minAvailable below them (issue 37 §5)', () => {
    const pdbs = (o: readonly K8sObject[]) => new Map(o.filter((x) => x.kind === 'PodDisruptionBudget').map((x) => [x.metadata.labels['app.kubernetes.io/component'], x.spec]));
    const one = renderChart('rel', [EXAMPLE_VALUES], { services: { gateway: { replicaCount: 1 }, authz: { autoscaling: { minReplicas: 3 } } } });
    const byComponent = pdbs(one);
    // a single pod under minAvailable: 1 could never be evicted: no budget for it
    for (const single of ['gateway', 'notifications']) {
      expect(deployments(one).get(single)!.spec.replicas).toBe(1);
      expect(byComponent.has(single)).toBe(false);
    }
    for (const [name, spec] of byComponent) {
      const d = deployments(one).get(name)!;
      const replicas = d.spec.replicas ?? one.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === d.metadata.name)!.spec.minReplicas;
      expect({ name, below: spec.minAvailable < replicas }).toEqual({ name, below: true });
      expect(spec.selector.matchLabels).toEqual(d.spec.selector.matchLabels);
    }
    expect(byComponent.get('authz')).toMatchObject({ minAvailable: 1 });
    const tooMany = template('rel', [EXAMPLE_VALUES], { podDisruptionBudget: { enabled: true, minAvailable: 2 } });
    expect(tooMany.ok).toBe(false);
    expect(tooMany.stderr).toContain('podDisruptionBudget.minAvailable (2) must be below the replicas of gateway (2)');
    expect(pdbs(renderChart('rel', [EXAMPLE_VALUES], { podDisruptionBudget: { enabled: false } })).size).toBe(0);
  });

  it('keeps every pod serving for preStopSleepSeconds after it is told to stop, below the grace period (issue 37 §3)', () => {
    const sleeps = (o: readonly K8sObject[]) => new Map([...deployments(o)].map(([name, d]) => [name, d.spec.template.spec.containers[0].lifecycle?.preStop?.sleep?.seconds]));
    expect(new Set(sleeps(objects0()).values())).toEqual(new Set([5]));
    expect(sleeps(objects0()).size).toBe(SERVICES.length);
    expect(new Set(sleeps(renderChart('rel', [EXAMPLE_VALUES], { preStopSleepSeconds: 0 })).values())).toEqual(new Set([undefined]));
    const tooLong = template('rel', [EXAMPLE_VALUES], { preStopSleepSeconds: 30 });
    expect(tooLong.ok).toBe(false);
    expect(tooLong.stderr).toContain('preStopSleepSeconds (30) must be below terminationGracePeriodSeconds (30)');
  });

  it('spreads replicated services over nodes and zones, with preferred pod anti-affinity; single-replica ones get neither (issue 37 §5)', () => {
    const objects = renderChart('rel', [EXAMPLE_VALUES], { services: { authz: { autoscaling: { minReplicas: 1 } } } });
    for (const [name, d] of deployments(objects)) {
      const pod = d.spec.template.spec;
      const own = d.spec.selector.matchLabels;
      if (name === 'notifications') {
        expect({ name, spread: pod.topologySpreadConstraints, affinity: pod.affinity }).toEqual({ name, spread: undefined, affinity: undefined });
        continue;
      }
      // authz: one replica at minimum, but its HPA may add more: spread as well
      expect({ name, spread: pod.topologySpreadConstraints }).toEqual({
        name,
        spread: ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map((topologyKey) => ({
          maxSkew: 1, topologyKey, whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: own },
        })),
      });
      expect({ name, affinity: pod.affinity }).toEqual({
        name,
        affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: own } } }] } },
      });
    }
    const given = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['auth'] }] }] } } };
    const custom = deployments(renderChart('rel', [EXAMPLE_VALUES], { affinity: given, spread: { enabled: false } }));
    for (const d of custom.values()) {
      expect(d.spec.template.spec.affinity).toEqual(given);
      expect(d.spec.template.spec.topologySpreadConstraints).toBeUndefined();
    }
  });

  it('routes gRPC through its own Ingress: the public API to the gateway, AuthzService straight to authz, with ingress-nginx and Traefik settings (issue 37 §5)', () => {
    const on = renderChart('rel', [EXAMPLE_VALUES], {
      ingress: {
        enabled: true, className: 'nginx', hosts: ['auth.example.com'],
        grpc: { enabled: true, host: 'grpc.auth.example.com', tls: [{ secretName: 'grpc-tls', hosts: ['grpc.auth.example.com'] }] },
      },
      networkPolicy: { enabled: true, gatewayFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }] },
    });
    const ingresses = new Map(on.filter((o) => o.kind === 'Ingress').map((o) => [o.metadata.name, o]));
    expect([...ingresses.keys()].sort()).toEqual(['rel', 'rel-grpc']);
    // the HTTP Ingress is untouched: no gRPC annotation on REST and GraphQL
    expect(ingresses.get('rel')!.metadata.annotations).toBeUndefined();
    const grpc = ingresses.get('rel-grpc')!;
    // ingress-nginx reads backend-protocol; NGINX Inc.'s controller names the gRPC Services
    expect(grpc.metadata.annotations).toEqual({ 'nginx.ingress.kubernetes.io/backend-protocol': 'GRPC', 'nginx.org/grpc-services': 'rel-gateway-grpc,rel-authz-grpc' });
    expect(grpc.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ secretName: 'grpc-tls', hosts: ['grpc.auth.example.com'] }],
      rules: [{
        host: 'grpc.auth.example.com',
        http: {
          paths: [
            { path: '/gatehouse.authz.v1.AuthzService', pathType: 'Prefix', backend: { service: { name: 'rel-authz-grpc', port: { name: 'grpc' } } } },
            { path: '/', pathType: 'Prefix', backend: { service: { name: 'rel-gateway-grpc', port: { name: 'grpc' } } } },
          ],
        },
      }],
    });
    for (const component of ['gateway', 'authz']) {
      const svc = on.find((o) => o.kind === 'Service' && o.metadata.name === `rel-${component}-grpc`)!;
      // Traefik and Contour read the scheme from the Service: one carrying only the gRPC port, so HTTP/1.1 stays HTTP/1.1
      expect(svc.metadata.annotations).toEqual({ 'traefik.ingress.kubernetes.io/service.serversscheme': 'h2c', 'projectcontour.io/upstream-protocol.h2c': 'grpc' });
      expect(svc.spec.ports).toEqual([{ name: 'grpc', port: 9091, targetPort: 'grpc', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }]);
      expect(svc.spec.selector).toEqual(deployments(on).get(component)!.spec.selector.matchLabels);
      const container = containerOf(deployments(on).get(component)!);
      expect(container.ports).toContainEqual({ name: 'grpc', containerPort: 9091, protocol: 'TCP' });
    }
    // with NetworkPolicies, authz admits gRPC from where the gateway does (the ingress controller)
    const authzPolicy = on.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-authz')!;
    expect(authzPolicy.spec.ingress).toContainEqual({ ports: [{ port: 'grpc', protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }] });

    const gatewayOnly = renderChart('rel', [EXAMPLE_VALUES], { ingress: { enabled: true, hosts: ['a.example.com'], grpc: { enabled: true, host: 'g.example.com', authzDirect: false } } });
    expect(gatewayOnly.find((o) => o.metadata.name === 'rel-grpc')!.spec.rules[0].http.paths.map((p: any) => p.backend.service.name)).toEqual(['rel-gateway-grpc']);
    expect(gatewayOnly.find((o) => o.metadata.name === 'rel-grpc')!.metadata.annotations['nginx.org/grpc-services']).toBe('rel-gateway-grpc');
    expect(gatewayOnly.filter((o) => o.metadata.name === 'rel-authz-grpc')).toEqual([]);
    const noHost = template('rel', [EXAMPLE_VALUES], { ingress: { enabled: true, hosts: ['a.example.com'], grpc: { enabled: true } } });
    expect(noHost.stderr).toContain('ingress.grpc.host is required with ingress.grpc.enabled');
    expect(renderChart('rel', [EXAMPLE_VALUES]).filter((o) => /-grpc$/.test(o.metadata.name))).toEqual([]);
  });

  it('renders replicas from values when authz autoscaling is off, and an unheadless authz Service on request', () => {
    const objects = renderChart('rel', [EXAMPLE_VALUES], { services: { authz: { autoscaling: { enabled: false }, replicaCount: 3, headless: false } } });
    expect(objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(deployments(objects).get('authz')!.spec.replicas).toBe(3);
    expect(objects.find((o) => o.kind === 'Service' && o.metadata.name === 'rel-authz')!.spec.clusterIP).toBeUndefined();
  });

  it('serves OpenFGA\'s API (HTTP and gRPC) on authz only with openfgaApi.enabled: its flags, named container ports, own ClusterIP Service and policy (issue 36 §2)', () => {
    const authzOf = (o: readonly K8sObject[]) => containerOf(deployments(o).get('authz')!);
    expect(objects0().filter((o) => o.metadata.name === 'rel-authz-openfga')).toEqual([]);
    expect(authzOf(objects0()).args.some((a: string) => a.startsWith('--openfga-'))).toBe(false);
    const on = renderChart('rel', [EXAMPLE_VALUES], {
      openfgaApi: { enabled: true, port: 8090, grpcPort: 8091 },
      secrets: { values: { openfgaAuthnPresharedKeys: 'k1,k2' } },
      networkPolicy: { enabled: true, openfgaFrom: [{ podSelector: { matchLabels: { app: 'billing' } } }] },
    });
    const c = authzOf(on);
    const parsed = loadConfig('authz', c.args.slice(1), { readFile: podSecretFiles(deployments(on).get('authz')!, secretData(on)) });
    expect(parsed.errors).toEqual([]);
    expect(parsed.config).toMatchObject({ openfgaHttpPort: 8090, openfgaGrpcPort: 8091, openfgaHttpHost: '0.0.0.0', openfgaAuthnMethod: 'preshared', openfgaAuthnPresharedKeys: ['k1', 'k2'] });
    expect(c.ports).toContainEqual({ name: 'openfga-http', containerPort: 8090, protocol: 'TCP' });
    expect(c.ports).toContainEqual({ name: 'openfga-grpc', containerPort: 8091, protocol: 'TCP' });
    for (const [name, d] of deployments(on)) if (name !== 'authz') expect(containerOf(d).args.some((a: string) => a.startsWith('--openfga-') || a.startsWith('--gateway-openfga-'))).toBe(false);
    const svc = on.find((o) => o.kind === 'Service' && o.metadata.name === 'rel-authz-openfga')!;
    expect(svc.spec.type).toBe('ClusterIP');
    // the ports named as OpenFGA's own chart names them
    expect(svc.spec.ports).toEqual([
      { name: 'http', port: 8090, targetPort: 'openfga-http', protocol: 'TCP' },
      { name: 'grpc', port: 8091, targetPort: 'openfga-grpc', protocol: 'TCP', appProtocol: 'grpc' },
    ]);
    expect(svc.spec.selector['app.kubernetes.io/component']).toBe('authz');
    // off the public edge: neither the Ingress nor the gateway routes it unless openfgaApi.gateway says so
    expect(on.filter((o) => o.kind === 'Ingress' || (o.kind === 'Service' && o.metadata.name === 'rel-gateway')).flatMap((o) => JSON.stringify(o.spec)).join('')).not.toContain('openfga');
    const policy = on.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-authz')!;
    expect(policy.spec.ingress).toContainEqual({
      ports: [{ port: 'openfga-http', protocol: 'TCP' }, { port: 'openfga-grpc', protocol: 'TCP' }], from: [{ podSelector: { matchLabels: { app: 'billing' } } }],
    });
    // without openfgaApi.gateway, the gateway is not among the OpenFGA ports' sources
    expect(policy.spec.ingress.filter((r: unknown) => /openfga/.test(JSON.stringify(r)) && /"gateway"/.test(JSON.stringify(r)))).toEqual([]);
  });

  it('routes OpenFGA\'s HTTP API through the gateway with openfgaApi.gateway: --gateway-openfga-url to the OpenFGA Service, and the policy admits the gateway (issue 36 §2)', () => {
    const gatewayArgs = (o: readonly K8sObject[]): string[] => containerOf(deployments(o).get('gateway')!).args;
    // openfgaApi.gateway alone does nothing while the API is off
    expect(gatewayArgs(renderChart('rel', [EXAMPLE_VALUES], { openfgaApi: { gateway: true } })).some((a) => a.startsWith('--gateway-openfga-url'))).toBe(false);
    expect(gatewayArgs(renderChart('rel', [EXAMPLE_VALUES], { openfgaApi: { enabled: true }, secrets: { values: { openfgaAuthnPresharedKeys: 'k1' } } }))
      .some((a) => a.startsWith('--gateway-openfga-url'))).toBe(false);
    const on = renderChart('rel', [EXAMPLE_VALUES], {
      openfgaApi: { enabled: true, gateway: true },
      secrets: { values: { openfgaAuthnPresharedKeys: 'k1' } },
      networkPolicy: { enabled: true, openfgaFrom: [{ podSelector: { matchLabels: { app: 'billing' } } }] },
    });
    const args = gatewayArgs(on);
    expect(args).toContain('--gateway-openfga-url=http://rel-authz-openfga:8082');
    const parsed = loadConfig('gateway', args.slice(1), { readFile: podSecretFiles(deployments(on).get('gateway')!, secretData(on)) });
    expect(parsed.errors).toEqual([]);
    expect(parsed.config?.gatewayOpenfgaUrl).toBe('http://rel-authz-openfga:8082');
    const svc = on.find((o) => o.kind === 'Service' && o.metadata.name === 'rel-authz-openfga')!;
    expect(svc.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port])).toEqual([['http', 8082], ['grpc', 8083]]);
    const policy = on.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'rel-authz')!;
    expect(policy.spec.ingress).toContainEqual({
      ports: [{ port: 'openfga-http', protocol: 'TCP' }],
      from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gatehouse', 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'gateway' } } }],
    });
    // the chart sets the flag itself
    expect(() => renderChart('rel', [EXAMPLE_VALUES], { config: { gateway: { gatewayOpenfgaUrl: 'http://elsewhere:1' } } })).toThrow(/gatewayOpenfgaUrl.*set by the chart/);
  });

  it('turns tracing on for every process with config.shared.otlpEndpoint, and renders no --otlp-endpoint by default (issue 15)', () => {
    const off = deployments(renderChart('rel', [EXAMPLE_VALUES]));
    for (const [name, d] of off) expect([name, argValue(containerOf(d).args, '--otlp-endpoint')]).toEqual([name, undefined]);
    const on = deployments(renderChart('rel', [EXAMPLE_VALUES], { config: { shared: { otlpEndpoint: 'http://otel-collector:4318', logFormat: 'pretty' } } }));
    expect([...on.keys()].sort()).toEqual(SERVICES);
    for (const [name, d] of on) {
      const args = containerOf(d).args;
      expect([name, argValue(args, '--otlp-endpoint'), argValue(args, '--log-format')]).toEqual([name, 'http://otel-collector:4318', 'pretty']);
    }
  });
});
