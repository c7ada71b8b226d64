/**
 * @module gateway/login-page
 * The hosted login page under `/app` (issue 18 item 5; spec flag `--enable-login-page`, default
 * true). The page is the Preact app of `apps/login`, built by Vite into `apps/login/dist` when the
 * repository is installed (the root `prepare` script); the gateway reads that build once at start-up
 * and serves it from memory:
 * - `GET|HEAD /app/assets/<name>`: the hashed JS/CSS files, cached as immutable; an unknown name is 404.
 * - `GET|HEAD /app` and any other path under `/app/` (history fallback): `index.html`, `no-store`, with
 *   `--organization-name`, `--organization-logo` and the `--url` path prefix written into the
 *   `data-gatehouse-config` attribute of `#app` (HTML-escaped JSON; no inline script).
 * Every answer carries {@link loginPageCsp}. The page talks to the public `/v1` routes only.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express } from 'express';
import { AppError } from '@gatehouse/errors';
import type { Logger } from '@gatehouse/observability';

export interface LoginPageOptions {
  /** `--organization-name` */
  organizationName: string;
  /** `--organization-logo`: an http(s) URL or `''` */
  organizationLogo: string;
  /** the path prefix of `--url` (`/auth` for `https://example.com/auth`), `''` for none */
  basePath: string;
  /** the build to serve; default: `dist/` of the `@gatehouse/login` workspace */
  distDir?: string;
}

/** Where the page lives. */
export const LOGIN_PAGE_PATH = '/app';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * The page's Content-Security-Policy: scripts, styles, fonts and fetches from the gateway only (no
 * 'unsafe-inline', no eval), images also as `data:` (the TOTP QR code) and from the logo's origin,
 * nothing framed, no `<base>`, forms to the gateway only.
 * @param logo `--organization-logo`; its origin is allowed for images when it is an http(s) URL
 */
export function loginPageCsp(logo: string): string {
  let logoOrigin = '';
  try {
    const u = new URL(logo);
    if (u.protocol === 'https:' || u.protocol === 'http:') logoOrigin = ` ${u.origin}`;
  } catch {
    logoOrigin = '';
  }
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:${logoOrigin}; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}

const escapeAttr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The default build directory: `apps/login/dist`, found through the workspace package. */
export function defaultDistDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@gatehouse/login/package.json')), 'dist');
}

interface Build {
  index: string;
  assets: Map<string, { type: string; body: Buffer }>;
}

/**
 * Reads the build: `index.html` and every file of `assets/`.
 * @returns null when there is no build (the page was never built)
 */
function readBuild(dir: string): Build | null {
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

/** `index.html` with the config attribute filled in and the asset URLs under the `--url` prefix. */
function renderIndex(html: string, opts: LoginPageOptions): string {
  const config = JSON.stringify({ organization_name: opts.organizationName, organization_logo: opts.organizationLogo, base_path: opts.basePath });
  let page = html.replace('data-gatehouse-config=""', `data-gatehouse-config="${escapeAttr(config)}"`)
    .replace('<title>Sign in</title>', `<title>Sign in · ${escapeAttr(opts.organizationName)}</title>`);
  if (opts.basePath) page = page.replaceAll('"/app/', `"${opts.basePath}/app/`);
  return page;
}

/**
 * Mounts the page on `app` (before the 404 fallbacks). Without a build it logs one error and `/app`
 * answers 503 `unavailable` naming the build command, so a deployment without the page still serves
 * the API.
 */
export function mountLoginPage(app: Express, opts: LoginPageOptions, logger: Logger): void {
  const dir = opts.distDir ?? defaultDistDir();
  const build = readBuild(dir);
  const csp = loginPageCsp(opts.organizationLogo);
  if (!build) {
    logger.error({ dir }, 'the hosted login page is not built (run `npm run build:login`); /app answers 503');
    app.get([LOGIN_PAGE_PATH, `${LOGIN_PAGE_PATH}/{*rest}`], (_req, _res, next) => {
      next(new AppError('unavailable', 'the login page is not built: run `npm run build:login`'));
    });
    return;
  }
  const page = renderIndex(build.index, opts);
  app.get(`${LOGIN_PAGE_PATH}/assets/:name`, (req, res, next) => {
    const found = build.assets.get(req.params.name);
    if (!found) { next(new AppError('not_found', 'Not Found')); return; }
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('Content-Type', found.type);
    res.status(200).end(found.body);
  });
  app.get([LOGIN_PAGE_PATH, `${LOGIN_PAGE_PATH}/{*rest}`], (_req, res) => {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').status(200).send(page);
  });
}
