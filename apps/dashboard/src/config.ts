/**
 * @module dashboard/config
 * What the gateway tells the console (gateway/src/dashboard.ts writes it into `data-gatehouse-config`
 * of `#app`, HTML-escaped JSON; no inline script): the path prefix of `--url` and whether the GraphQL
 * playground is served.
 */

export interface ConsoleConfig {
  /** the path prefix of `--url` (`''` or e.g. `/auth`), no trailing slash */
  basePath: string;
  /** `--enable-playground` */
  playground: boolean;
}

/** Reads the config from the mount element; defaults when it is absent or malformed (a dev server). */
export function readConfig(root: HTMLElement): ConsoleConfig {
  let raw: Record<string, unknown> = {};
  try {
    raw = JSON.parse(root.dataset.gatehouseConfig || '{}') as Record<string, unknown>;
  } catch {
    raw = {};
  }
  return {
    basePath: (typeof raw.base_path === 'string' ? raw.base_path : '').replace(/\/+$/, ''),
    playground: raw.playground !== false,
  };
}
