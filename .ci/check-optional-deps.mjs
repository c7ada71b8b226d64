// TOOLCHAIN.md: `npm ci` refuses a lockfile that lacks an optionalDependencies entry's own lockfile
// entry. Fails when any package's optionalDependencies name a package the lockfile does not hold.
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
const packages = lock.packages ?? {};
const missing = [];
for (const [where, pkg] of Object.entries(packages)) {
  for (const dep of Object.keys(pkg.optionalDependencies ?? {})) {
    const nested = `${where ? `${where}/` : ''}node_modules/${dep}`;
    if (!packages[nested] && !packages[`node_modules/${dep}`]) missing.push(`${where || '(root)'} → ${dep}`);
  }
}
if (missing.length > 0) {
  console.error(`optional dependencies without a lockfile entry:\n  ${missing.join('\n  ')}`);
  process.exit(1);
}
