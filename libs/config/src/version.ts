/** @module @gatehouse/config/version The build version reported by `meta.version` (behaviour.md §5.2): the root package.json version. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const VERSION: string = (JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as { version: string }).version;
