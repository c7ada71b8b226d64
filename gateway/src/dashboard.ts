/**
 * @module gateway/dashboard
 * The admin console under `/dashboard` (issue 33 §1; flag `--enable-dashboard`, default true): the
 * Preact app of `apps/dashboard`, built by Vite into `apps/dashboard/dist` when the repository is
 * installed (the root `prepare` script), served from memory like the login page (static-app.ts), in
 * both modes. The `--url` path prefix is written into the `data-gatehouse-config` attribute of `#app`
 * (HTML-escaped JSON; no inline script). The console signs in with the admin secret
 * (`POST /v1/admin/login`, the `service-admin` cookie) and talks to the public `/v1/admin` routes only.
 */
import type { Express } from 'express';
import type { Logger } from '@gatehouse/observability';
import { escapeAttr, mountStaticApp, workspaceDist } from './static-app.ts';

/** Where the console lives. */
export const DASHBOARD_PATH = '/dashboard';

/**
 * The console's Content-Security-Policy: scripts, styles, fonts and fetches from the gateway only (no
 * 'unsafe-inline', no eval), images from the gateway or `data:`, nothing framed, no `<base>`, forms
 * to the gateway only.
 */
export const DASHBOARD_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export interface DashboardOptions {
  /** the path prefix of `--url` (`/auth` for `https://example.com/auth`), `''` for none */
  basePath: string;
  /** `--enable-playground`: the overview links to GraphiQL */
  playground: boolean;
  /** the build to serve; default: `dist/` of the `@gatehouse/dashboard` workspace */
  distDir?: string;
}

/** Mounts the console on `app` (before the 404 fallbacks); a missing build answers 503 (static-app.ts). */
export function mountDashboard(app: Express, opts: DashboardOptions, logger: Logger): void {
  const config = JSON.stringify({ base_path: opts.basePath, playground: opts.playground });
  mountStaticApp(app, {
    mount: DASHBOARD_PATH,
    dir: opts.distDir ?? workspaceDist('@gatehouse/dashboard'),
    csp: DASHBOARD_CSP,
    render: (html) => {
      const page = html.replace('data-gatehouse-config=""', `data-gatehouse-config="${escapeAttr(config)}"`);
      return opts.basePath ? page.replaceAll(`"${DASHBOARD_PATH}/`, `"${opts.basePath}${DASHBOARD_PATH}/`) : page;
    },
    name: 'the admin console',
    buildCommand: 'npm run build:dashboard',
  }, logger);
}
