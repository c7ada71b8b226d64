/**
 * `npm run test:k8s`: Gatehouse in a real Kubernetes cluster (issue 37 §2–§4). A system test run on demand,
 * not part of `npm test`: it needs root, builds or reuses the cluster's binaries (scripts/install-kube.sh)
 * and the image (scripts/build-image.sh), and takes minutes.
 *
 * Stages, in order (each prints its duration; the run stops at the first failure and names the stage):
 *  1. cluster: `scripts/kube-up.sh` (single node on 172.31.255.1, CoreDNS, metrics-server);
 *  2. image: `scripts/build-image.sh`, then `podman save` and `ctr -n k8s.io images import`;
 *  3. install: a fresh PostgreSQL database and NATS stream on the machine's servers (reached through
 *     the Services of namespace gatehouse-deps), the Secret and `helm install --wait` as the chart README
 *     writes them, plus the test's values (small CPU requests, authz HPA 1–3 at 50 % CPU);
 *  4. helm test: the chart's test pod asks the gateway Service for /readyz and GraphQL `meta`;
 *  5. ready: every pod of the release Ready;
 *  6. flows through the gateway Service (its cluster DNS name, resolved by the cluster's CoreDNS, and its
 *     ClusterIP, reached through kube-proxy): sign-up with TOTP enrolment, login with the MFA challenge
 *     answered by a recovery code, the README's sign-up/skip/login/profile, check_permissions after
 *     writing a model and a tuple, and an OAuth 2.0 authorization code flow with PKCE (openid-client);
 *  7. grpc: a pod of the image calls authz's CheckPermissions over gRPC on the headless Service;
 *  8. upgrade: `helm upgrade` with flag changes (--log-level, SMTP pointed at the test's sink on the
 *     node's address, --enable-email-verification) under a steady load: zero failed requests;
 *  9. hpa: CPU load on authz until its HPA scales from 1 to ≥ 2 replicas, then back to 1 without load;
 * 10. kills: under load, one pod of each service is killed (SIGKILL, no grace): failed idempotent requests
 *     counted (zero allowed); sign-ups run beside the load, and every sign-up answered 200 must reach the
 *     test's webhook receiver as one `user.signup` delivery (at-least-once, one `delivery_id`) and its
 *     verification email the SMTP sink (behaviour.md's outbox promise, issue 37 §4);
 * 11. uninstall: `helm uninstall --wait` leaves no object of the release; the database and stream dropped;
 * 12. `scripts/kube-down.sh`.
 *
 * Usage: `npm run test:k8s [-- --no-build] [--no-up] [--keep] [--skip=hpa,kills]`; `--no-build` reuses
 * the image in podman's store, `--no-up` uses the cluster already up, `--keep` leaves the cluster (and
 * the release, on failure) up for a look.
 * Environment: none required; CONTAINERS_CONF defaults to scripts/podman/containers.conf.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import http from 'node:http';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as oidc from 'openid-client';
import { PUBLIC_API_NAMES, SERVICE_NAMES } from '@gatehouse/contracts/service-names';
import { startSmtpSink, type SmtpSink } from '@gatehouse/testing';
import { generate } from 'otplib';
import { startReceiver, type Receiver } from '../support/webhook-receiver.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KUBE_BIN = path.join(ROOT, '.tools/kube/bin');
const RUN = path.join(ROOT, '.tools/kube/run');
const HELM = path.join(ROOT, '.tools/bin/helm');
const SOCK = path.join(RUN, 'run/containerd/containerd.sock');
const NS = 'gatehouse-k8s';
const RELEASE = 'gh';
const HTTP_PORT = 8080;
const GATEWAY_HOST = `${RELEASE}-gateway.${NS}.svc.cluster.local`;
const BASE = `http://${GATEWAY_HOST}:${HTTP_PORT}`;
const PASSWORD = 'Passw0rd!x-k8s';
const CALLBACK = 'http://127.0.0.1:9/rp/callback';
/** the node's address (scripts/kube-up.sh): pods reach the test's SMTP sink and webhook receiver there */
const NODE_IP = '172.31.255.1';
const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
const IMAGE = `localhost/gatehouse:${version}`;
const args = new Set(process.argv.slice(2));
const skip = new Set([...args].filter((a) => a.startsWith('--skip=')).flatMap((a) => a.slice(7).split(',')));
/* eslint-disable no-restricted-properties -- the children's environment (kubectl, helm, podman); Gatehouse reads none */
process.env.KUBECONFIG = path.join(RUN, 'admin.kubeconfig');
process.env.PATH = `${KUBE_BIN}:${process.env.PATH ?? ''}`;
process.env.CONTAINERS_CONF ??= path.join(ROOT, 'scripts/podman/containers.conf');
process.env.HELM_CACHE_HOME = path.join(RUN, 'helm/cache');
process.env.HELM_CONFIG_HOME = path.join(RUN, 'helm/config');
process.env.HELM_DATA_HOME = path.join(RUN, 'helm/data');
/* eslint-enable no-restricted-properties */

const started = Date.now();
const durations: Array<[string, number]> = [];
const notes: string[] = [];
let reached = 'none';

function say(text: string): void {
  process.stdout.write(`[test:k8s ${((Date.now() - started) / 1000).toFixed(1)} s] ${text}\n`);
}
function note(text: string): void {
  notes.push(text);
  say(text);
}

/** Runs one stage, records its duration and that it was reached. */
async function stage(name: string, fn: () => Promise<void> | void): Promise<void> {
  if (skip.has(name)) {
    say(`stage ${name}: skipped (--skip)`);
    return;
  }
  reached = name;
  const t0 = Date.now();
  say(`stage ${name} ...`);
  await fn();
  durations.push([name, (Date.now() - t0) / 1000]);
  say(`stage ${name} passed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** Runs a command; returns stdout. Throws with stderr on a non-zero exit unless `allowFail`. */
function run(cmd: string, argv: string[], opts: { allowFail?: boolean; input?: string; inherit?: boolean } = {}): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, input: opts.input, stdio: opts.inherit ? ['ignore', 'inherit', 'inherit'] : undefined });
  const out = { status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  if (!opts.allowFail && out.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited ${out.status}: ${out.stderr}${out.stdout.slice(-2000)}`);
  return out;
}
const kubectl = (argv: string[], opts: { allowFail?: boolean; input?: string } = {}) => run('kubectl', argv, opts);
const helm = (argv: string[], opts: { allowFail?: boolean } = {}) => run(HELM, argv, opts);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns a truthy value; throws `what` after `timeoutMs`. */
async function until<T>(what: string, timeoutMs: number, check: () => T | Promise<T>, everyMs = 1000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// --- HTTP to the cluster --------------------------------------------------------------------------
// The host resolves cluster names with the cluster's own DNS (CoreDNS on the kube-dns Service), and
// reaches ClusterIPs through kube-proxy's rules, as any node does. Node's fetch has no hook for
// name resolution, so this is a fetch of the same shape on node:http (never follows redirects).
const resolver = new Resolver({ timeout: 2000, tries: 2 });
resolver.setServers(['10.96.0.10']);
const resolved = new Map<string, { ip: string; at: number }>();
async function clusterIp(host: string): Promise<string> {
  const hit = resolved.get(host);
  if (hit && Date.now() - hit.at < 5000) return hit.ip;
  const [ip] = await resolver.resolve4(host);
  assert.ok(ip, `cluster DNS has no address for ${host}`);
  resolved.set(host, { ip, at: Date.now() });
  return ip;
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

async function clusterFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const req = new Request(input, init);
  const url = new URL(req.url);
  const ip = await clusterIp(url.hostname);
  const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { host: url.host };
  req.headers.forEach((v, k) => { headers[k] = v; });
  if (body) headers['content-length'] = String(body.length);
  return await new Promise<Response>((resolve, reject) => {
    const r = http.request({ host: ip, port: url.port || 80, path: url.pathname + url.search, method: req.method, headers, agent, signal: init.signal ?? AbortSignal.timeout(15_000) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const h = new Headers();
        for (let i = 0; i < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode ?? 0;
        resolve(new Response([204, 205, 304].includes(status) ? null : Buffer.concat(chunks), { status, headers: h }));
      });
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** clusterFetch as openid-client's customFetch (its body type is a subset of fetch's). */
const oidcFetch: oidc.CustomFetch = (url, options) => clusterFetch(url, options as RequestInit);

type Reply = { status: number; body: any; cookies: string[] };
async function call(method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await clusterFetch(`${BASE}${route}`, {
    method, headers: { origin: BASE, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed, cookies: res.headers.getSetCookie() };
}
const cookieOf = (r: Reply, name: string) => r.cookies.map((c) => c.split(';')[0]!).find((c) => c.startsWith(`${name}=`)) ?? '';

// --- the release ----------------------------------------------------------------------------------
const secrets = {
  admin: randomBytes(24).toString('hex'), client: randomBytes(24).toString('hex'),
  jwt: randomBytes(32).toString('hex'), encryption: randomBytes(32).toString('hex'),
};
const tag = randomBytes(3).toString('hex');
const DB = `gatehouse_k8s_${tag}`;
const STREAM = `GATEHOUSE_K8S_${tag.toUpperCase()}`;
const ADMIN = { 'x-service-admin-secret': secrets.admin };

/** The values the test adds to the README's install command: the local image, small CPU requests
 * (a 2-core node), the authz HPA from 1 to 3 replicas at 50 % CPU, development mode (no SMTP: mails
 * stay in the development outbox), plain-HTTP cookies, and a per-IP rate limit above the test's load
 * (every request of the test comes from the node's one address). */
const TEST_VALUES = [
  `image.repository=localhost/gatehouse`, `image.tag=${version}`, 'image.pullPolicy=Never',
  'config.shared.env=development', 'config.shared.appCookieSecure=false', 'config.shared.appCookieSameSite=lax',
  `config.shared.natsStream=${STREAM}`, 'config.shared.rateLimitRps=5000', 'config.shared.rateLimitBurst=5000',
  // the test's webhook receiver is on the node's private address
  'config.shared.allowPrivateWebhookTargets=true',
  'services.authz.autoscaling.minReplicas=1', 'services.authz.autoscaling.maxReplicas=3',
  'services.authz.autoscaling.targetCPUUtilizationPercentage=50',
  'services.authz.resources.requests.cpu=100m',
  ...['gateway', ...SERVICE_NAMES].filter((s) => s !== 'authz').map((s) => `services.${s}.resources.requests.cpu=25m`),
];

function podsOf(component?: string): Array<{ name: string; ready: boolean; phase: string; component: string; deleting: boolean }> {
  const sel = `app.kubernetes.io/instance=${RELEASE}${component ? `,app.kubernetes.io/component=${component}` : ''}`;
  const list = JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-l', sel, '-o', 'json']).stdout) as {
    items: Array<{ metadata: { name: string; labels: Record<string, string>; deletionTimestamp?: string }; status: { phase: string; conditions?: Array<{ type: string; status: string }> } }>;
  };
  return list.items.map((p) => ({
    name: p.metadata.name, phase: p.status.phase, component: p.metadata.labels['app.kubernetes.io/component'] ?? '',
    ready: p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false, deleting: Boolean(p.metadata.deletionTimestamp),
  }));
}

let sink: SmtpSink | undefined;
let receiver: Receiver | undefined;

// --- load -----------------------------------------------------------------------------------------
type Load = { stop(): Promise<{ ok: number; failed: number; resent: number; failures: Map<string, number> }>; ok(): number };
let user: { token: string; email: string } | undefined;

/** Steady load of idempotent reads through the gateway Service, one request per worker at a time:
 * check_permissions (authz), profile (authn), admin meta (admin), organizations (orgs), webauthn
 * credentials (mfa). A request fails when it answers other than 200, or when it throws twice: a read
 * whose connection failed (a gateway pod killed under it, or not yet gone from kube-proxy's rules) is
 * sent once more on a new connection, as HTTP clients do for idempotent requests (RFC 9110 §9.2.2);
 * those second tries are counted and reported. */
function startLoad(workers: number, kinds: readonly string[] = PUBLIC_API_NAMES): Load {
  let stopped = false;
  let ok = 0;
  let failed = 0;
  let resent = 0;
  const failures = new Map<string, number>();
  const bearer = { authorization: `Bearer ${user!.token}` };
  const requests: Record<string, () => Promise<Reply>> = {
    authz: () => call('POST', '/v1/check_permissions', { checks: [{ relation: 'viewer', object: 'document:readme' }] }, bearer),
    authn: () => call('GET', '/v1/profile', undefined, bearer),
    admin: () => call('GET', '/v1/admin/meta', undefined, ADMIN),
    orgs: () => call('POST', '/v1/admin/organizations', {}, ADMIN),
    mfa: () => call('POST', '/v1/webauthn_credentials', {}, bearer),
  };
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = w; !stopped; i++) {
      const kind = kinds[i % kinds.length]!;
      try {
        const r = await requests[kind]!().catch(async (e: unknown) => {
          if (!/ECONNRESET|ECONNREFUSED|EHOSTUNREACH|EPIPE|socket hang up/.test(String((e as Error).message) + String((e as NodeJS.ErrnoException).code))) throw e;
          resent++;
          return await requests[kind]!();
        });
        if (r.status === 200) ok++;
        else {
          failed++;
          const key = `${kind} ${r.status} ${JSON.stringify(r.body).slice(0, 120)}`;
          failures.set(key, (failures.get(key) ?? 0) + 1);
        }
      } catch (e) {
        failed++;
        const key = `${kind} ${(e as Error).message}`;
        failures.set(key, (failures.get(key) ?? 0) + 1);
      }
    }
  });
  return {
    ok: () => ok,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return { ok, failed, resent, failures };
    },
  };
}
/** Sign-ups one at a time through the gateway Service beside the load, each with a new address; the
 * addresses answered 200 are the ones whose webhook and email must arrive. */
function startSignups(prefix: string): { stop(): Promise<{ answered: string[]; other: number }> } {
  let stopped = false;
  const answered: string[] = [];
  let other = 0;
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const email = `${prefix}-${i}-${tag}@example.com`;
      try {
        const r = await call('POST', '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
        if (r.status === 200) answered.push(email);
        else other++;
      } catch {
        other++; // not idempotent, so not retried: the account may or may not exist
      }
      await sleep(200);
    }
  })();
  return { async stop() { stopped = true; await loop; return { answered, other }; } };
}

const showFailures = (f: Map<string, number>) => [...f].map(([k, n]) => `    ${n} × ${k}`).join('\n');

// --- the run --------------------------------------------------------------------------------------
async function main(): Promise<void> {
  await stage('cluster', () => {
    if (!args.has('--no-up')) run('bash', [path.join(ROOT, 'scripts/kube-up.sh')], { inherit: true });
    kubectl(['get', '--raw', '/readyz']);
  });

  await stage('image', () => {
    if (!args.has('--no-build')) run('bash', [path.join(ROOT, 'scripts/build-image.sh')], { inherit: true });
    const size = Number(run('podman', ['image', 'inspect', '--format', '{{.Size}}', IMAGE]).stdout.trim());
    note(`image ${IMAGE}: ${(size / 1e6).toFixed(0)} MB`);
    const tar = path.join(tmpdir(), `gatehouse-image-${tag}.tar`);
    try {
      run('podman', ['save', '--format', 'docker-archive', '-o', tar, IMAGE]);
      run('ctr', ['--address', SOCK, '-n', 'k8s.io', 'images', 'import', tar]);
    } finally {
      rmSync(tar, { force: true });
    }
    const names = run('ctr', ['--address', SOCK, '-n', 'k8s.io', 'images', 'ls', '-q']).stdout.split('\n');
    assert.ok(names.includes(IMAGE), `containerd holds ${IMAGE}: ${names.join(' ')}`);
  });

  await stage('install', async () => {
    // the webhook receiver and SMTP sink of the kills stage, on the node's address (up with the cluster)
    sink = await startSmtpSink({ host: NODE_IP });
    receiver = await startReceiver(NODE_IP);
    run('createdb', ['-h', '127.0.0.1', '-U', 'postgres', DB]);
    // a namespace left by an earlier run may still be terminating (its deletion waits for every API
    // group, metrics.k8s.io included, to answer discovery)
    await until(`namespace ${NS} of an earlier run to be gone`, 180_000, () => kubectl(['get', 'namespace', NS], { allowFail: true }).status !== 0, 2000);
    kubectl(['create', 'namespace', NS]);
    // the chart README's commands: the Secret, then helm install with its --set flags
    kubectl(['-n', NS, 'create', 'secret', 'generic', 'gatehouse',
      `--from-literal=admin-secret=${secrets.admin}`, `--from-literal=client-secret=${secrets.client}`,
      `--from-literal=jwt-secret=${secrets.jwt}`, `--from-literal=database-url=postgres://postgres@postgres.gatehouse-deps:5432/${DB}`,
      '--from-literal=redis-url=redis://redis.gatehouse-deps:6379', `--from-literal=encryption-key=${secrets.encryption}`]);
    const t0 = Date.now();
    helm(['install', RELEASE, path.join(ROOT, 'charts/gatehouse'), '-n', NS, '--wait', '--timeout', '12m',
      '--set', `config.shared.url=${BASE}`, '--set', 'config.shared.clientId=my-app',
      '--set', 'config.shared.natsUrl=nats://nats.gatehouse-deps:4222', '--set', 'secrets.existingSecret=gatehouse',
      '--set', 'secrets.keys={admin-secret,client-secret,jwt-secret,database-url,redis-url,encryption-key}',
      ...TEST_VALUES.flatMap((v) => ['--set', v])]);
    note(`helm install --wait: ${((Date.now() - t0) / 1000).toFixed(1)} s, ${podsOf().length} pods`);
  });

  await stage('helm-test', () => {
    // exits non-zero unless the test pod succeeded
    const r = helm(['test', RELEASE, '-n', NS, '--timeout', '3m']);
    say(r.stdout.trim().split('\n').filter((l) => /TEST SUITE|Phase|Last Started|NAME/.test(l)).join('; '));
  });

  await stage('ready', () => {
    const pods = podsOf();
    const comps = new Set(pods.map((p) => p.component));
    for (const c of ['gateway', ...SERVICE_NAMES]) assert.ok(comps.has(c), `a pod of ${c}`);
    const notReady = pods.filter((p) => !p.ready);
    assert.deepEqual(notReady, [], 'every pod Ready');
    note(`every pod Ready: ${pods.length} (${[...comps].map((c) => `${c} ${pods.filter((p) => p.component === c).length}`).join(', ')})`);
  });

  await stage('flows', async () => {
    // sign-up with MFA (on by default): the TOTP enrolment, completed with a code; then a login is
    // challenged and a recovery code answers it
    const mfaEmail = `k8s-mfa-${tag}@example.com`;
    const s = await call('POST', '/v1/signup', { email: mfaEmail, password: PASSWORD, confirm_password: PASSWORD });
    assert.equal(s.status, 200, JSON.stringify(s.body));
    assert.equal(s.body.should_show_totp_screen, true, JSON.stringify(s.body).slice(0, 300));
    const enrol = await call('POST', '/v1/verify_otp', { otp: await generate({ secret: s.body.authenticator_secret }), is_totp: true }, { cookie: cookieOf(s, 'mfa') });
    assert.equal(enrol.body.message, 'OTP verified successfully.', JSON.stringify(enrol.body));
    const challenged = await call('POST', '/v1/login', { email: mfaEmail, password: PASSWORD });
    assert.equal(challenged.body.should_show_totp_screen, true, JSON.stringify(challenged.body).slice(0, 300));
    const answered = await call('POST', '/v1/verify_otp', { otp: s.body.authenticator_recovery_codes[0], is_totp: true, email: mfaEmail }, { cookie: cookieOf(challenged, 'mfa') });
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
    assert.equal(typeof answered.body.access_token, 'string');
    say('sign-up with TOTP enrolment; login challenged for MFA and answered with a recovery code');

    // the README's quickstart user: sign-up, skip MFA setup, login, profile
    const email = `k8s-ada-${tag}@example.com`;
    const up = await call('POST', '/v1/signup', { email, password: PASSWORD, confirm_password: PASSWORD });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const skipped = await call('POST', '/v1/skip_mfa_setup', {}, { cookie: cookieOf(up, 'mfa') });
    assert.equal(skipped.status, 200, JSON.stringify(skipped.body));
    const login = await call('POST', '/v1/login', { email, password: PASSWORD });
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.equal(login.body.message, 'Logged in successfully');
    user = { token: login.body.access_token, email };
    const profile = await call('GET', '/v1/profile', undefined, { authorization: `Bearer ${user.token}` });
    assert.equal(profile.body.email, email);
    say('README: sign-up, skip_mfa_setup, login, profile');

    // check_permissions after the README's model and tuple
    const model = await call('POST', '/v1/admin/fga/model', { dsl: 'model\n  schema 1.1\ntype user\ntype document\n  relations\n    define viewer: [user]\n' }, ADMIN);
    assert.equal(model.status, 200, JSON.stringify(model.body));
    const tuples = await call('POST', '/v1/admin/fga/tuples', { tuples: [{ user: `user:${profile.body.id}`, relation: 'viewer', object: 'document:readme' }] }, ADMIN);
    assert.equal(tuples.status, 200, JSON.stringify(tuples.body));
    const check = await call('POST', '/v1/check_permissions', { checks: [{ relation: 'viewer', object: 'document:readme' }, { relation: 'viewer', object: 'document:other' }] }, { authorization: `Bearer ${user.token}` });
    assert.deepEqual(check.body.results.map((r: { allowed: boolean }) => r.allowed), [true, false], JSON.stringify(check.body));
    say('check_permissions: [true, false]');

    // OAuth 2.0 authorization code + PKCE with openid-client, the browser session from /v1/login
    const created = await call('POST', '/v1/admin/create_client', {
      name: 'k8s relying party', allowed_scopes: ['openid', 'profile', 'email'], redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'], is_first_party: true,
    }, ADMIN);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const config = await oidc.discovery(new URL(BASE), created.body.client.client_id, { redirect_uris: [CALLBACK] },
      oidc.ClientSecretBasic(created.body.client_secret), { execute: [oidc.allowInsecureRequests], [oidc.customFetch]: oidcFetch });
    config[oidc.customFetch] = oidcFetch;
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const authorize = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK, scope: 'openid profile email', state, nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const redirect = await clusterFetch(authorize, { headers: { cookie: cookieOf(login, 'cookie_session') } });
    const location = redirect.headers.get('location') ?? '';
    assert.ok(redirect.status === 302 && location.startsWith(`${CALLBACK}?`), `authorize: ${redirect.status} ${location}`);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
    const claims = tokens.claims()!;
    assert.equal(claims.iss, BASE);
    assert.equal(claims.sub, profile.body.id);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, profile.body.id);
    assert.equal(info.email, email);
    say('OAuth code flow with PKCE: ID token for the user, userinfo');
  });

  await stage('grpc', async () => {
    // authz's CheckPermissions over gRPC from a pod of the image, on the headless Service (every
    // ready authz pod, round robin): the project's own client (@gatehouse/rpc) in the image
    const script = `
      import { createCallContext, createGrpcClient, serviceDescriptor } from '@gatehouse/rpc';
      const client = createGrpcClient(serviceDescriptor('authz'), { address: '${RELEASE}-authz:9091' });
      const ctx = createCallContext({ headers: { authorization: 'Bearer ' + process.env.TOKEN } });
      const r = await client.call('CheckPermissions', { checks: [{ relation: 'viewer', object: 'document:readme' }, { relation: 'viewer', object: 'document:other' }] }, ctx);
      console.log('RESULT ' + JSON.stringify(r));
      client.close();`;
    const pod = `${RELEASE}-grpc-probe-${tag}`;
    const manifest = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: pod, namespace: NS },
      spec: {
        restartPolicy: 'Never', automountServiceAccountToken: false,
        securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 },
        containers: [{
          name: 'probe', image: IMAGE, imagePullPolicy: 'Never', command: ['node', '--input-type=module', '-e', script],
          env: [{ name: 'TOKEN', value: user!.token }],
          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          resources: { requests: { cpu: '10m', memory: '64Mi' } },
        }],
      },
    };
    kubectl(['create', '-f', '-'], { input: JSON.stringify(manifest) });
    try {
      await until(`pod ${pod} to finish`, 120_000, () => ['Succeeded', 'Failed'].includes(kubectl(['-n', NS, 'get', 'pod', pod, '-o', 'jsonpath={.status.phase}']).stdout.trim()));
      const logs = kubectl(['-n', NS, 'logs', pod]).stdout;
      const line = logs.split('\n').find((l) => l.startsWith('RESULT '));
      assert.ok(line, `the gRPC probe's output: ${logs}`);
      const result = JSON.parse(line.slice(7)) as { results: Array<{ allowed: boolean }> };
      assert.deepEqual(result.results.map((r) => r.allowed), [true, false]);
      say('gRPC CheckPermissions from a pod: [true, false]');
    } finally {
      kubectl(['-n', NS, 'delete', 'pod', pod, '--wait=false'], { allowFail: true });
    }
  });

  await stage('upgrade', async () => {
    const load = startLoad(6);
    await sleep(3000);
    const t0 = Date.now();
    // a log level, and email from the development outbox to SMTP (the sink on the node's address),
    // with sign-ups verified by email, so that each sign-up of the kills stage sends one
    helm(['upgrade', RELEASE, path.join(ROOT, 'charts/gatehouse'), '-n', NS, '--reuse-values', '--set', 'config.shared.logLevel=debug',
      '--set', `config.shared.smtpHost=${NODE_IP}`, '--set', `config.shared.smtpPort=${sink!.port}`,
      '--set', 'config.shared.smtpSenderEmail=gatehouse@example.com', '--set', 'config.shared.enableEmailVerification=true',
      '--wait', '--timeout', '12m']);
    const took = (Date.now() - t0) / 1000;
    await sleep(5000);
    const r = await load.stop();
    const args0 = kubectl(['-n', NS, 'get', 'deploy', `${RELEASE}-authn`, '-o', 'jsonpath={.spec.template.spec.containers[0].args}']).stdout;
    assert.match(args0, /--log-level=debug/, 'the new flag is in the rolled pods');
    note(`helm upgrade (--log-level=debug, --smtp-*, --enable-email-verification) under load: ${took.toFixed(1)} s, ${r.ok} requests ok, ${r.failed} failed, ${r.resent} sent again after a connection error${r.failed ? `\n${showFailures(r.failures)}` : ''}`);
    assert.equal(r.failed, 0, 'zero failed requests during helm upgrade');
  });

  await stage('hpa', async () => {
    const replicas = () => Number(kubectl(['-n', NS, 'get', 'deploy', `${RELEASE}-authz`, '-o', 'jsonpath={.status.readyReplicas}']).stdout.trim() || 0);
    await until('authz at 1 replica', 180_000, () => replicas() === 1, 2000);
    const t0 = Date.now();
    const load = startLoad(24, ['authz']);
    let peak = 1;
    try {
      await until('the authz HPA to scale to ≥ 2', 300_000, () => { peak = Math.max(peak, replicas()); return peak >= 2; }, 2000);
      const up = (Date.now() - t0) / 1000;
      const hpa = kubectl(['-n', NS, 'get', 'hpa', `${RELEASE}-authz`, '-o', 'jsonpath={.status.currentMetrics[0].resource.current.averageUtilization}']).stdout;
      note(`authz HPA: 1 → ${peak} ready replicas ${up.toFixed(0)} s after the load started (CPU ${hpa}% of request)`);
      await sleep(20_000);
      peak = Math.max(peak, replicas());
    } finally {
      const r = await load.stop();
      note(`HPA load: ${r.ok} check_permissions ok, ${r.failed} failed${r.failed ? `\n${showFailures(r.failures)}` : ''}`);
    }
    const t1 = Date.now();
    await until('the authz HPA to scale back to 1', 420_000, () => replicas() === 1 && podsOf('authz').length === 1, 3000);
    note(`authz HPA: back to 1 replica ${((Date.now() - t1) / 1000).toFixed(0)} s after the load stopped (peak ${peak})`);
  });

  await stage('kills', async () => {
    const results: string[] = [];
    // a killed pod can only be covered by another replica: authz (HPA minimum 1 so far) runs 2
    kubectl(['-n', NS, 'patch', 'hpa', `${RELEASE}-authz`, '--type=merge', '-p', '{"spec":{"minReplicas":2}}']);
    await until('authz at 2 ready replicas', 300_000, () => podsOf('authz').filter((p) => p.ready && !p.deleting).length >= 2, 2000);
    // every sign-up answered 200 must be delivered to this webhook (behaviour.md §5.4, §8)
    const hook = await call('POST', '/v1/admin/add_webhook', { event_name: 'user.signup', endpoint: `${receiver!.url}/signup` }, ADMIN);
    assert.equal(hook.status, 200, JSON.stringify(hook.body));
    const signedUp: string[] = [];
    let signupsOther = 0;
    for (const component of ['gateway', ...SERVICE_NAMES]) {
      const before = podsOf(component).filter((p) => p.ready && !p.deleting);
      const victim = before[0];
      if (!victim) throw new Error(`no ready pod of ${component}`);
      const load = startLoad(6);
      const signups = startSignups(`k8s-kill-${component}`);
      await sleep(3000);
      // SIGKILL, no grace: the container dies mid-request, as in a node crash or an OOM kill
      kubectl(['-n', NS, 'delete', 'pod', victim.name, '--grace-period=0', '--force', '--wait=false'], { allowFail: true });
      await until(`${component} back to ${before.length} ready pods`, 300_000, () => podsOf(component).filter((p) => p.ready && !p.deleting && p.name !== victim.name).length >= before.length, 2000);
      await sleep(3000);
      const r = await load.stop();
      const w = await signups.stop();
      signedUp.push(...w.answered);
      signupsOther += w.other;
      results.push(`${component} (${before.length} replicas): ${r.ok} ok, ${r.failed} failed`);
      note(`kill one ${component} pod of ${before.length} under load: ${r.ok} requests ok, ${r.failed} failed, ${r.resent} sent again after a connection error${r.failed ? `\n${showFailures(r.failures)}` : ''}`);
    }
    const failed = results.filter((r) => !r.endsWith(', 0 failed'));

    // the outbox's promise across the kills: each answered sign-up's user.signup event delivered at
    // least once under one delivery_id, and its verification email sent (JetStream redelivers what a
    // killed notifications pod had not acknowledged; retries wait up to 1+2+4+8 s)
    const t0 = Date.now();
    const deliveries = () => {
      const ids = new Map<string, Set<string>>();
      for (const got of receiver!.at('/signup')) {
        const email = String(got.body?.user?.email ?? '');
        ids.set(email, (ids.get(email) ?? new Set()).add(String(got.body?.delivery_id)));
      }
      return ids;
    };
    const missing = () => signedUp.filter((e) => !deliveries().has(e) || sink!.to(e).length === 0);
    await until(`every answered sign-up's webhook and email (missing: ${missing().slice(0, 5).join(', ')})`, 180_000, () => missing().length === 0, 2000)
      .catch((e: Error) => {
        const what = (m: string): string => `${m} (${[...(deliveries().has(m) ? [] : ['webhook']), ...(sink!.to(m).length === 0 ? ['email'] : [])].join(' and ')})`;
        // what the surviving pods said about it: their warnings and errors, and any line naming a missing account
        const lost = missing();
        for (const pod of kubectl(['-n', NS, 'get', 'pods', '-o', 'name'], { allowFail: true }).stdout.split('\n').filter(Boolean)) {
          const lines = kubectl(['-n', NS, 'logs', pod], { allowFail: true }).stdout.split('\n')
            .filter((l) => /"level":"(warn|error|fatal)"/.test(l) || lost.some((m) => l.includes(m)));
          if (lines.length > 0) process.stderr.write(`--- ${pod}: ${lines.length} warnings, errors or lines naming a missing account (last 40) ---\n${lines.slice(-40).join('\n')}\n`);
        }
        throw new Error(`${e.message}; still missing ${lost.length} of ${signedUp.length}: ${lost.slice(0, 5).map(what).join(', ')}`);
      });
    const ids = deliveries();
    const twice = [...ids].filter(([, set]) => set.size > 1);
    const requests = receiver!.at('/signup').length;
    const mails = signedUp.reduce((n, e) => n + sink!.to(e).length, 0);
    note(`outbox across the kills: ${signedUp.length} sign-ups answered 200 (${signupsOther} not), every one's user.signup webhook delivered `
      + `(${requests} requests, ${ids.size} accounts, ${requests - [...ids.values()].reduce((n, set) => n + set.size, 0)} repeated deliveries) and verification email sent (${mails} mails), `
      + `all within ${((Date.now() - t0) / 1000).toFixed(0)} s of the last kill`);
    assert.deepEqual(twice.map(([e]) => e), [], 'one user.signup event (one delivery_id) per account');
    assert.deepEqual(failed, [], 'zero failed requests when one pod of each service is killed');
  });
}

/** helm uninstall and what it must leave: nothing of the release in the namespace. */
async function uninstall(): Promise<void> {
  helm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout', '5m']);
  await until('the release pods to be gone', 120_000, () => podsOf().length === 0, 2000);
  const left = () => kubectl(['-n', NS, 'get', 'all,configmap,secret,pdb,hpa,ingress,networkpolicy,serviceaccount,endpointslice', '-l', `app.kubernetes.io/instance=${RELEASE}`, '-o', 'name']).stdout.trim();
  // EndpointSlices go by garbage collection, a moment after their Service
  await until(`nothing of the release left (${left()})`, 60_000, () => left() === '', 2000);
  assert.equal(helm(['list', '-n', NS, '-q']).stdout.trim(), '');
}

/** The database and stream of the run, on the machine's servers. */
async function dropData(): Promise<void> {
  run('dropdb', ['-h', '127.0.0.1', '-U', 'postgres', '--if-exists', '--force', DB], { allowFail: true });
  try {
    const { connect } = await import('@nats-io/transport-node');
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const nc = await connect({ servers: '127.0.0.1:4222' });
    await (await jetstreamManager(nc)).streams.delete(STREAM).catch(() => false);
    await nc.close();
  } catch (e) {
    say(`NATS stream ${STREAM} not deleted: ${(e as Error).message}`);
  }
}

let failure: Error | undefined;
let failedAt = '';
try {
  await main();
} catch (e) {
  failure = e as Error;
  failedAt = reached;
  process.stderr.write(`[test:k8s] stage ${reached} FAILED: ${failure.stack}\n`);
  const pods = kubectl(['-n', NS, 'get', 'pods', '-o', 'wide'], { allowFail: true }).stdout;
  process.stderr.write(`${pods}\n`);
  for (const line of pods.split('\n').slice(1)) {
    const [name, ready] = line.split(/\s+/);
    if (name && ready && ready.split('/')[0] !== ready.split('/')[1]) {
      process.stderr.write(`--- ${name} ---\n${kubectl(['-n', NS, 'logs', name, '--tail=30'], { allowFail: true }).stdout}\n`);
    }
  }
}
agent.destroy();
await sink?.close();
await receiver?.close();
if (!failure || !args.has('--keep')) {
  try {
    if (helm(['status', RELEASE, '-n', NS], { allowFail: true }).status === 0) {
      await stage('uninstall', uninstall).catch((e: Error) => { failure ??= e; process.stderr.write(`[test:k8s] uninstall FAILED: ${e.message}\n`); });
    }
    kubectl(['delete', 'namespace', NS, '--wait=true', '--timeout=120s'], { allowFail: true });
  } finally {
    await dropData();
  }
  if (!args.has('--keep')) {
    await stage('kube-down', () => { run('bash', [path.join(ROOT, 'scripts/kube-down.sh')], { inherit: true }); })
      .catch((e: Error) => { failure ??= e; });
  }
}
say(`durations: ${durations.map(([n, s]) => `${n} ${s.toFixed(1)} s`).join(', ')}`);
for (const n of notes) process.stdout.write(`  ${n}\n`);
if (failure) {
  say(`FAILED at stage ${failedAt || reached} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exitCode = 1;
} else {
  say(`PASSED in ${((Date.now() - started) / 1000).toFixed(1)} s (last stage: ${reached})`);
}
