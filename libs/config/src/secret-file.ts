/** @module @gatehouse/config/secret-file: the `file:/path` form of every secret flag (issue 37 §5: no secret in the process list). */

import { readFileSync } from 'node:fs';

/** The prefix that makes a secret flag's value a path to read instead of the secret itself. */
export const FILE_PREFIX = 'file:';

/** Reads one file as UTF-8 text; throws a Node `SystemError` (with `code`) when it cannot. Injectable for tests. */
export type ReadTextFile = (path: string) => string;

/** The default reader: `fs.readFileSync(path, 'utf8')`. */
export const readTextFile: ReadTextFile = (path) => readFileSync(path, 'utf8');

/** The outcome of resolving one secret flag value: the value to parse, or a start-up error line. */
export type SecretFileResult = { readonly value: string } | { readonly error: string };

/**
 * Resolves a secret flag's raw value. `file:/run/secrets/x` is replaced by the content of
 * `/run/secrets/x` with trailing line breaks (`\n`, `\r\n`) removed, so a secret mounted from a
 * Kubernetes Secret, a Docker/Podman secret or written by `echo` reads as typed. Any other value is
 * returned as given.
 *
 * The error names the flag and the path (the path is not secret) plus the system error code
 * (`ENOENT`, `EACCES`, `EISDIR`), never any part of the content. An empty file is an error too: a
 * mounted Secret whose key is missing must not start the process with an empty secret.
 *
 * @param flag the flag's kebab name, e.g. `--admin-secret`
 * @param raw the value as written on the command line
 * @param read how to read the file; {@link readTextFile} by default
 * @param what how the error names the file: `secret file` (default), or `file` for a PEM flag that is no secret
 */
export function resolveSecretFile(flag: string, raw: string, read: ReadTextFile = readTextFile, what = 'secret file'): SecretFileResult {
  if (!raw.startsWith(FILE_PREFIX)) return { value: raw };
  const path = raw.slice(FILE_PREFIX.length);
  if (path === '') return { error: `${flag}: "file:" needs a path, e.g. ${flag}=file:/etc/gatehouse/secrets/${flag.slice(2)}` };
  let content: string;
  try {
    content = read(path);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const reason = typeof code === 'string' ? code : e instanceof Error ? e.message : String(e);
    return { error: `${flag}: cannot read the ${what} ${path} (${reason})` };
  }
  const value = content.replace(/(\r?\n)+$/, '');
  if (value.trim() === '') return { error: `${flag}: the ${what} ${path} is empty` };
  return { value };
}
