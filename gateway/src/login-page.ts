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
import type { Express } from 'express';
import type { Logger } from '@gatehouse/observability';
import { escapeAttr, mountStaticApp, workspaceDist } from './static-app.ts';

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

/** The default build directory: `apps/login/dist`, found through the workspace package. */
export function defaultDistDir(): string {
  return workspaceDist('@gatehouse/login');
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
  mountStaticApp(app, {
    mount: LOGIN_PAGE_PATH,
    dir: opts.distDir ?? defaultDistDir(),
    csp: loginPageCsp(opts.organizationLogo),
    render: (html) => renderIndex(html, opts),
    name: 'the login page',
    buildCommand: 'npm run build:login',
  }, logger);
}
