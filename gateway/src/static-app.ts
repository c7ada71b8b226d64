/**
 * @module gateway/static-app
 * Serving a Vite single-page build from memory (the hosted login page under `/app`, the admin console
 * under `/dashboard`): the build is read once at start-up;
 * - `GET|HEAD <mount>/assets/<name>`: the hashed JS/CSS files, cached as immutable; an unknown name is 404.
 * - `GET|HEAD <mount>` and any other path under `<mount>/` (history fallback): the rendered
 *   `index.html`, `no-store`.
 * Every answer carries the app's Content-Security-Policy. Without a build, one error is logged and the
 * pages answer 503 `unavailable` naming the build command, so a deployment without it still serves the API.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express } from 'express';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** A Vite build: `index.html` and every file of `assets/`. */
export interface Build {
  index: string;
  assets: Map<string, { type: string; body: Buffer }>;
}

/**
 * The `dist/` directory of a workspace package (`@gatehouse/login`, `@gatehouse/dashboard`).
 * @param pkg the package name; it must export `./package.json`
 */
export function workspaceDist(pkg: string): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'dist');
}

/**
 * Reads a build.
 * @returns null when there is no build (the app was never built)
 */
export function readBuild(dir: string): Build | null {
  let html: string;
  try {
    html = readFileSync(path.join(dir, 'index.html'), 'utf8');
  } catch {
    return null;
  }
  const assets = new Map<string, { type: string; body: Buffer }>();
  for (const name of readdirSync(path.join(dir, 'assets'))) {
    assets.set(name, { type: TYPES[path.extname(name)] ?? 'application/octet-stream', body: readFileSync(path.join(dir, 'assets', name)) });
  }
  return { index: html, assets };
}

/** HTML attribute escaping (`&`, `"`, `<`, `>`). */
export const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface StaticAppOptions {
  /** where the app is mounted, e.g. `/app` */
  mount: string;
  /** the build directory */
  dir: string;
  /** the Content-Security-Policy of every answer */
  csp: string;
  /** `index.html` as served (config attribute filled in, asset URLs under the `--url` prefix) */
  render(index: string): string;
  /** what a missing build is called in the log and the 503 (`the login page`), and its build command */
  name: string;
  buildCommand: string;
}

/** Mounts a build on `app` (before the 404 fallbacks); see the module comment. */
export function mountStaticApp(app: Express, opts: StaticAppOptions, logger: Logger): void {
  const build = readBuild(opts.dir);
  const pages = [opts.mount, `${opts.mount}/{*rest}`];
  if (!build) {
    logger.error({ dir: opts.dir }, `${opts.name} is not built (run \`${opts.buildCommand}\`); ${opts.mount} answers 503`);
    app.get(pages, (_req, _res, next) => {
      next(new AppError('unavailable', `${opts.name} is not built: run \`${opts.buildCommand}\``));
    });
    return;
  }
  const page = opts.render(build.index);
  app.get(`${opts.mount}/assets/:name`, (req, res, next) => {
    const found = build.assets.get(req.params.name);
    if (!found) { next(new AppError('not_found', 'Not Found')); return; }
    res.setHeader('Content-Security-Policy', opts.csp);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('Content-Type', found.type);
    res.status(200).end(found.body);
  });
  app.get(pages, (_req, res) => {
    res.setHeader('Content-Security-Policy', opts.csp);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').status(200).send(page);
  });
}
