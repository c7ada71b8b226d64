/**
 * Vite build of the hosted login page (issue 18 item 5). The output in dist/ is static: the gateway
 * serves it under `/app` (gateway/src/login-page.ts), rewriting the `/app/` prefix when `--url` has a
 * path. The build settings are shared with the admin console (vite.shared.ts).
 */
import { defineConfig } from 'vite';
import { appViteConfig } from './vite.shared.ts';

export default defineConfig(appViteConfig('/app/'));
