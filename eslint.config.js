// Type-aware lint (STYLE §10): promise handling, type-only imports, exhaustive switches, and the
// import rules that keep the architecture honest (no process.env, no deep imports into packages,
// services never import each other, libs never import services).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.ci/**', 'charts/**', 'coverage/**', '**/*.d.ts', 'eslint.config.js', 'jest.config.js', 'bin/gatehouse.mjs', 'libs/contracts/src/gen/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
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
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@gatehouse/*/src/*'], message: 'Import a package by its name, not its files (STYLE §1).' },
      ] }],
    },
  },
  {
    // Services never import each other; libs never import services (ARCHITECTURE §2, STYLE §1).
    files: ['libs/**/*.ts'],
    ignores: ['libs/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/services/**'], message: 'libs never import services (STYLE §1).' }] }] },
  },
);
