#!/usr/bin/env node
// The `gatehouse` CLI: `gatehouse <command> [flags]` (all, gateway, authn, mfa, admin, orgs, authz, notifications).
// Node 24 runs the TypeScript sources directly (type stripping); an older Node cannot, so say so plainly
// instead of failing with ERR_UNKNOWN_FILE_EXTENSION. This file stays plain JavaScript for that reason.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`FATAL: Gatehouse needs Node 24 or newer, this is Node ${process.versions.node}. `
    + 'The repository brings Node 24 itself: run it through npm (`npm start`, `npx gatehouse <command>`).\n');
  process.exit(1);
}
// `--version` reads package.json and nothing else: no TypeScript is loaded, so it answers at once.
const first = process.argv[2];
if (first === '--version' || first === '-v' || first === 'version') {
  const { readFileSync } = await import('node:fs');
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`gatehouse ${version}\n`);
  process.exit(0);
}
// V8's young generation capped at 16 MiB per semi-space (issue 38 §5). Left to itself V8 grows each
// semi-space to 64 MiB under request traffic on a machine with this much memory, and keeps the pages:
// that was most of the RSS growth under load (test/bench/README.md, "Memory under load"). The flag must be
// given before V8 sets up its heap (v8.setFlagsFromString is too late), so the launcher starts itself again
// with it through process.execve (same process id, same stdio; ≈ one Node bootstrap of CPU). The container
// image passes the flag on its ENTRYPOINT and skips this. An operator's own value wins: a
// --max-semi-space-size on node's command line or in NODE_OPTIONS is kept as given.
const SEMI_SPACE_MIB = 16;
const givesSemiSpace = (a) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(a);
if (![...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some(givesSemiSpace) && typeof process.execve === 'function') {
  const { fileURLToPath } = await import('node:url');
  process.execve(process.execPath, [process.execPath, `--max-semi-space-size=${SEMI_SPACE_MIB}`, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], process.env);
}
// Cache V8's compiled code of the modules between starts (issue 22 §3: loading modules is most of the
// start-up CPU). Under os.tmpdir() unless NODE_COMPILE_CACHE names a directory; a cache that cannot be
// written is skipped, never an error.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.();
await import('./cli.ts');
