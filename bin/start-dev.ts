/**
 * `npm start`: `gatehouse all` with development defaults, signing tokens with an RS256 key pair made
 * once and kept beside the database.
 *
 * Usage: `node bin/start-dev.ts [flags]` (what `npm start -- [flags]` runs). The flags given are
 * appended after the development defaults, so a later flag wins (`--database-url=/tmp/dev.db`,
 * `--http-port=8090`, ...).
 *
 * Signing key: on the first start an RSA-2048 private key is written, PKCS#8 PEM, mode 0600, next to the
 * SQLite file (`./gatehouse.db` → `./gatehouse.jwt-key.pem`; for a server database or `:memory:`, in the
 * working directory as `./gatehouse.jwt-key.pem`). Later starts read it again, so tokens issued before a
 * restart still verify and the JWKS (`/.well-known/jwks.json`) and the discovery document keep serving
 * the same public key. Any `--jwt-*` flag given on the command line turns this off: the operator's
 * signing settings are used as given.
 *
 * Errors: a key file that exists but holds no RSA private key stops start-up with one `FATAL:` line
 * naming the file (delete it to have a new one made).
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The development defaults of `npm start`, before the caller's flags (a later flag wins). */
export const DEV_FLAGS: readonly string[] = [
  '--env=development',
  '--admin-secret=change-me-please-at-least-32-characters',
  '--client-id=gatehouse',
  '--client-secret=gatehouse-dev-secret',
  '--database-type=sqlite',
  '--database-url=./gatehouse.db',
  '--app-cookie-secure=false',
  '--app-cookie-same-site=lax',
];

/** The last value of `--name=value` or `--name value` in `args`, or undefined. */
function lastFlag(args: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  args.forEach((arg, i) => {
    if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
    else if (arg === name && i + 1 < args.length) value = args[i + 1];
  });
  return value;
}

/**
 * Where the signing key of these flags lives: beside the SQLite file, else in the working directory.
 * @param args the development defaults followed by the caller's flags
 * @returns an absolute path ending in `.jwt-key.pem`
 */
export function keyPathFor(args: readonly string[]): string {
  const type = lastFlag(args, '--database-type');
  const url = lastFlag(args, '--database-url');
  if (type === 'sqlite' && url && url !== ':memory:' && !url.includes('://')) {
    const file = path.resolve(url.replace(/^file:/, ''));
    return path.join(path.dirname(file), `${path.basename(file, path.extname(file))}.jwt-key.pem`);
  }
  return path.resolve('gatehouse.jwt-key.pem');
}

/**
 * Reads the signing key at `file`, or makes one (RSA-2048, PKCS#8 PEM, mode 0600) when there is none.
 * A key file readable by group or others is narrowed to 0600.
 * @returns the private key and whether it was created now
 * @throws Error naming the file when it exists but holds no RSA private key
 */
export function ensureSigningKey(file: string): { key: KeyObject; created: boolean } {
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
    return { key: privateKey, created: true };
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file} holds no PEM private key (${(err as Error).message}); delete it and a new key is made`);
  }
  if (key.asymmetricKeyType !== 'rsa') throw new Error(`${file} holds a ${key.asymmetricKeyType} key, not an RSA key; delete it and a new key is made`);
  return { key, created: false };
}

/**
 * The full `gatehouse all` argument list of `npm start -- <args>`: the development defaults, the RS256
 * key flags (unless `args` has a `--jwt-*` flag), then `args`.
 * @returns the arguments and, when a key is used, its file and whether it was made now
 */
export function devArguments(args: readonly string[]): { argv: string[]; keyFile?: string; created?: boolean } {
  if (args.some((a) => a.startsWith('--jwt-'))) return { argv: ['all', ...DEV_FLAGS, ...args] };
  const keyFile = keyPathFor([...DEV_FLAGS, ...args]);
  const { key, created } = ensureSigningKey(keyFile);
  const privatePem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  return { argv: ['all', ...DEV_FLAGS, '--jwt-type=RS256', `--jwt-private-key=${privatePem}`, `--jwt-public-key=${publicPem}`, ...args], keyFile, created };
}

/** A path as the user would type it: relative when under the working directory. */
const shown = (file: string): string => {
  const rel = path.relative(process.cwd(), file);
  return rel.startsWith('..') || path.isAbsolute(rel) ? file : `./${rel}`;
};

if (import.meta.main) {
  let dev: ReturnType<typeof devArguments>;
  try {
    dev = devArguments(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`FATAL: npm start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  if (dev.keyFile) {
    process.stderr.write(`npm start: tokens are signed with RS256, key ${dev.created ? 'made now in' : 'read from'} ${shown(dev.keyFile)} (mode 0600; delete it for a new one)\n`);
  }
  // run the CLI in this process, as `node bin/gatehouse.mjs all ...` would
  const cli = path.join(import.meta.dirname, 'gatehouse.mjs');
  process.argv = [process.argv[0]!, cli, ...dev.argv];
  await import(pathToFileURL(cli).href);
}
