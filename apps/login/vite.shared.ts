/**
 * The Vite build both browser apps share (the hosted login page under `/app`, the admin console
 * under `/dashboard`): JSX through Vite's own transform with Preact's automatic runtime (no plugin),
 * static output in dist/, and no inline script (the module-preload polyfill is off, no asset is
 * inlined), so the pages run under a CSP without 'unsafe-inline'.
 * @param base the path the gateway serves the app under, with a trailing slash (`/app/`)
 */
import type { UserConfig } from 'vite';

export function appViteConfig(base: string): UserConfig {
  return {
    base,
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
  };
}
