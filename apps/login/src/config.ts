/**
 * @module login/config
 * What the gateway tells the page (gateway/src/login-page.ts writes it into `data-gatehouse-config`
 * of `#app`, HTML-escaped JSON; no inline script): `--organization-name`, `--organization-logo` and
 * the path prefix of `--url`.
 */

export interface PageConfig {
  /** `--organization-name` */
  organizationName: string;
  /** `--organization-logo` (an http(s) URL) or `''` */
  organizationLogo: string;
  /** the path prefix of `--url` (`''` or e.g. `/auth`), no trailing slash: `/v1` and `/authorize` live under it */
  basePath: string;
}

/** Reads the config from the mount element; defaults when it is absent or malformed (a dev server). */
export function readConfig(root: HTMLElement): PageConfig {
  let raw: Record<string, unknown> = {};
  try {
    raw = JSON.parse(root.dataset.gatehouseConfig || '{}') as Record<string, unknown>;
  } catch {
    raw = {};
  }
  const str = (v: unknown, d: string): string => (typeof v === 'string' ? v : d);
  return {
    organizationName: str(raw.organization_name, 'Gatehouse'),
    organizationLogo: str(raw.organization_logo, ''),
    basePath: str(raw.base_path, '').replace(/\/+$/, ''),
  };
}
