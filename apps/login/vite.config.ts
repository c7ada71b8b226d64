/**
 * Vite build of the hosted login page (issue 18 item 5). The output in dist/ is static: the gateway
 * serves it under `/app` (gateway/src/login-page.ts), rewriting the `/app/` prefix when `--url` has a
 * path. JSX goes through Vite's own transform with Preact's automatic runtime (no plugin); no inline
 * script is produced (the module-preload polyfill is off), so the page runs under a CSP without
 * 'unsafe-inline'.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/app/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
