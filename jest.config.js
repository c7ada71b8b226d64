// Jest runs TypeScript through @swc/jest as native ESM (NODE_OPTIONS=--experimental-vm-modules, set by the npm scripts).
// Type-checking is a separate step (`npm run typecheck`), as TOOLCHAIN.md recommends.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2023' },
      module: { type: 'es6' },
    }],
  },
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/.ci/', '<rootDir>/.tools/'],
  // .tools holds the repo-local tools and, while `npm run test:k8s`'s cluster is up, the root
  // filesystems of its containers (each a copy of the image's /app): never modules or tests of ours
  modulePathIgnorePatterns: ['<rootDir>/.tools/'],
  transformIgnorePatterns: ['/node_modules/'],
  testTimeout: 30000,
  // stops the gatehouse processes a test file leaves running (a beforeAll that timed out mid-start)
  setupFilesAfterEnv: ['<rootDir>/libs/testing/src/jest-abandoned-starts.ts'],
  maxWorkers: 2,
};
