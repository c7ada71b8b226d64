/**
 * Vite build of the admin console (issue 33 §1), with the login page's settings
 * (apps/login/vite.shared.ts: Preact's automatic JSX runtime, no inline script). The output in dist/
 * is static: the gateway serves it under `/dashboard` (gateway/src/dashboard.ts).
 */
import { defineConfig } from 'vite';
import { appViteConfig } from '../login/vite.shared.ts';

export default defineConfig(appViteConfig('/dashboard/'));
