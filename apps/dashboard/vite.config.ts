/**
 * Vite build of the admin console (issue 33 §1), with the login page's settings
 * (apps/login/vite.shared.ts: Preact's automatic JSX runtime, no inline script). The output in dist/
 * is static: the gateway serves it under `/dashboard` (gateway/src/dashboard.ts).
 *
 * The console's data layer is TanStack Query's React adapter (`@tanstack/react-query`), run on
 * Preact through `preact/compat`: `react` and `react-dom` (and their `/jsx-runtime` entries, by
 * prefix) resolve to Preact's compatibility layer, so no React is bundled. tsconfig.json maps the
 * same names for the type checker.
 */
import { defineConfig } from 'vite';
import { appViteConfig } from '../login/vite.shared.ts';

const shared = appViteConfig('/dashboard/');

export default defineConfig({
  ...shared,
  build: {
    ...shared.build,
    rolldownOptions: {
      // TanStack Query marks its hooks "use client" (React Server Components); a browser bundle has no server part
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  resolve: {
    alias: [
      { find: /^react(-dom)?$/, replacement: 'preact/compat' },
      { find: /^react(-dom)?\/jsx-runtime$/, replacement: 'preact/jsx-runtime' },
    ],
  },
});
