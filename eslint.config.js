// Type-aware lint (STYLE §10): promise handling, type-only imports, exhaustive switches, and the
// import rules that keep the architecture honest (no process.env, no deep imports into packages,
// services never import each other, libs never import services).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const DEEP_IMPORTS = { group: ['@gatehouse/*/src/*'], message: 'Import a package by its name, not its files (STYLE §1).' };
// every folder under services/ is a service (services/registry.ts lists their modules)
const SERVICES = readdirSync(new URL('./services', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
// what a transport-free domain never imports (issue 14 §3, STYLE §1): transports, ORMs, drivers, GraphQL
const TRANSPORTS = [
  'express', 'node:http', 'node:http2', '@grpc/*', '@apollo/*', 'graphql', 'graphql-tag', '@mikro-orm/*', 'kysely', 'better-sqlite3',
  'pg', 'mysql2', 'mongodb', 'ioredis', '@nats-io/*', 'nodemailer', '@gatehouse/rpc', '@gatehouse/db', '@gatehouse/bus',
];

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.ci/**', 'charts/**', 'coverage/**', '**/*.d.ts', 'eslint.config.js', 'jest.config.js', 'bin/gatehouse.mjs', 'libs/contracts/src/gen/**', 'apps/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Flags are the only configuration (spec §1, STYLE §5).' }],
      'no-restricted-imports': ['error', { patterns: [DEEP_IMPORTS] }],
    },
  },
  {
    // Services never import each other; libs never import services (ARCHITECTURE §2, STYLE §1).
    files: ['libs/**/*.ts'],
    ignores: ['libs/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [DEEP_IMPORTS, { group: ['**/services/**'], message: 'libs never import services (STYLE §1).' }] }] },
  },
  // A service imports no other service, by package name or by path (ARCHITECTURE §2); it reaches a
  // peer only through the peer's proto (libs/rpc). Only services/registry.ts lists them all.
  ...SERVICES.map((name) => ({
    files: [`services/${name}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: [
      DEEP_IMPORTS,
      ...SERVICES.filter((other) => other !== name).map((other) => ({
        group: [`@gatehouse/${other}`, `**/services/${other}/**`, `../../${other}/**`, `../../../${other}/**`],
        message: `services never import each other (ARCHITECTURE §2): reach ${other} through its proto and a libs/rpc client`,
      })),
    ] }] },
  })),
  {
    // The domain is transport-free (issue 14 §3): plain values in, plain values out, storage through
    // its ports. Wire messages, cookies, call contexts, ORMs and buses stay in rpc/, storage/, main.ts.
    files: ['services/*/src/domain/**/*.ts'],
    ignores: ['services/*/src/domain/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [], patterns: [
      DEEP_IMPORTS,
      { group: TRANSPORTS, message: 'domain/ is transport-free (issue 14 §3, docs/architecture.md): move wire, cookie and storage code to rpc/ or storage/' },
      { group: ['**/rpc/**', '**/graphql/**', '**/storage/mikro/**', '**/storage/sql/**'], message: 'domain/ depends on storage/ports.ts only, never on transports or storage implementations' },
    ] }] },
  },
);
