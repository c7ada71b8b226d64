/**
 * @module test/charts/helm
 * Runs the repo-local helm (scripts/install-helm.sh puts it in .tools/bin) and parses what
 * `helm template` renders, for the chart tests.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '@gatehouse/testing';

export const HELM = path.join(REPO_ROOT, '.tools/bin/helm');
export const CHART = path.join(REPO_ROOT, 'charts/gatehouse');
export const EXAMPLE_VALUES = path.join(CHART, 'ci/example-values.yaml');

/** Fails with the fix when helm is not installed (the tests never skip). */
export function requireHelm(): void {
  if (!existsSync(HELM)) {
    throw new Error(`helm not found at ${HELM}: run scripts/install-helm.sh first (it installs helm into .tools/bin)`);
  }
}

let major: number | undefined;
/**
 * The installed helm's major version: 4 for the prebuilt binary scripts/install-helm.sh installs, 3
 * for its go-install fallback. Their schema validators word errors differently (helm 3's does not
 * name the property a failed `anyOf` misses), so the tests match the paths both print.
 */
export function helmMajor(): number {
  if (major === undefined) {
    requireHelm();
    const version = execFileSync(HELM, ['version', '--template', '{{.Version}}'], { encoding: 'utf8' });
    major = Number(/^v(\d+)\./.exec(version)?.[1] ?? NaN);
  }
  return major;
}

/** How helm's schema errors name a value: helm 4 `at '/a/b'`, helm 3 `a.b:`. */
export function schemaPath(dotted: string): string {
  return helmMajor() >= 4 ? `at '/${dotted.replace(/\./g, '/')}'` : `${dotted}:`;
}

/** The outcome of one helm run: exit status 0 or not, and everything it printed. */
export interface HelmRun {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `helm <args>` offline (no repositories, no cluster). */
export function helm(args: readonly string[]): HelmRun {
  requireHelm();
  try {
    const stdout = execFileSync(HELM, [...args], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, stdout, stderr: '' };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A Kubernetes object as parsed from the rendered YAML (loosely typed on purpose). */
export type K8sObject = { kind: string; apiVersion: string; metadata: { name: string; [k: string]: any }; spec?: any; [k: string]: any };

/**
 * `helm template <release> charts/gatehouse` with the given values files plus `values` (written to
 * a temporary file, so types survive); throws with helm's stderr when rendering fails.
 */
export function renderChart(release: string, valuesFiles: readonly string[], values?: Record<string, unknown>, extraArgs: readonly string[] = []): K8sObject[] {
  const run = template(release, valuesFiles, values, extraArgs);
  if (!run.ok) throw new Error(`helm template failed:\n${run.stderr}`);
  return parseAllDocuments(run.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null && typeof o === 'object');
}

/** `helm template` without throwing: for the tests of rendering failures (`extraArgs`, e.g. `--skip-schema-validation`). */
export function template(release: string, valuesFiles: readonly string[], values?: Record<string, unknown>, extraArgs: readonly string[] = []): HelmRun {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-chart-'));
  try {
    const files = [...valuesFiles];
    if (values) {
      const file = path.join(dir, 'values.json');
      writeFileSync(file, JSON.stringify(values)); // JSON is YAML
      files.push(file);
    }
    return helm(['template', release, CHART, ...files.flatMap((f) => ['-f', f]), ...extraArgs]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The `--set` values of the install command in charts/gatehouse/README.md (its first sh block), as
 * `[key, value]` pairs in order: what a user types.
 */
export function readmeInstallSets(): Array<[string, string]> {
  const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const command = block.replace(/\\\n/g, ' ').split('\n').find((l) => l.includes('helm install'));
  if (!command) throw new Error('charts/gatehouse/README.md has no helm install command in its first sh block');
  return [...command.matchAll(/--set '?([^'= ]+)=([^' ]*)'?/g)].map((m) => [m[1]!, m[2]!]);
}

/** The Deployments by component (`app.kubernetes.io/component`). */
export function deployments(objects: readonly K8sObject[]): Map<string, K8sObject> {
  return new Map(objects.filter((o) => o.kind === 'Deployment')
    .map((o) => [String(o.metadata.labels['app.kubernetes.io/component']), o]));
}

/** The one container of a Deployment. */
export function containerOf(deployment: K8sObject): { args: string[]; env?: any[]; [k: string]: any } {
  const containers = deployment.spec.template.spec.containers as any[];
  if (containers.length !== 1) throw new Error(`${deployment.metadata.name}: expected one container`);
  return containers[0];
}

/** Where the chart mounts the Secret in every pod (templates/_helpers.tpl `gatehouse.secretDir`). */
export const SECRET_DIR = '/etc/gatehouse/secrets';

/**
 * The Secret keys a Deployment's pods see as files under {@link SECRET_DIR}: the `items` of its
 * `secrets` volume, checked to be mounted read-only there. Empty when the pod mounts no Secret.
 */
export function mountedSecretKeys(deployment: K8sObject): string[] {
  const pod = deployment.spec.template.spec;
  const volume = (pod.volumes as any[] | undefined)?.find((v) => v.name === 'secrets');
  const mount = (containerOf(deployment).volumeMounts as any[] | undefined)?.find((m) => m.name === 'secrets');
  if (!volume && !mount) return [];
  if (!volume || !mount) throw new Error(`${deployment.metadata.name}: the secrets volume and its mount must come together`);
  if (mount.mountPath !== SECRET_DIR || mount.readOnly !== true) throw new Error(`${deployment.metadata.name}: secrets must be mounted read-only at ${SECRET_DIR}`);
  return (volume.secret.items as Array<{ key: string; path: string }>).map((i) => {
    if (i.path !== i.key) throw new Error(`${deployment.metadata.name}: Secret key ${i.key} is projected as ${i.path}`);
    return i.key;
  });
}

/**
 * What the kubelet gives a pod of `deployment`: a file reader for `loadConfig`'s `readFile` that
 * serves `<SECRET_DIR>/<key>` from `data` (the Secret's decoded values) for the keys its volume
 * projects, and fails like the file system (`ENOENT`) for anything else.
 */
export function podSecretFiles(deployment: K8sObject, data: Readonly<Record<string, string>>): (path: string) => string {
  const keys = new Set(mountedSecretKeys(deployment));
  return (file) => {
    const key = file.startsWith(`${SECRET_DIR}/`) ? file.slice(SECRET_DIR.length + 1) : undefined;
    const value = key !== undefined && keys.has(key) ? data[key] : undefined;
    if (value === undefined) throw Object.assign(new Error(`ENOENT: no such file, open '${file}'`), { code: 'ENOENT' });
    return value;
  };
}
