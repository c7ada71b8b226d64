/** @module @gatehouse/config/secret-file.test: `--<secret-flag>=file:/path` reads the secret from a file (issue 37 §5). */

import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { helpText } from './help.ts';
import { loadConfig } from './load.ts';
import { registryEntries, flagName } from './registry.ts';
import { argvFor, load, ok } from './test-fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` to a fresh file in the test directory and returns its path. */
function secretFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

describe('file: form of secret flags', () => {
  it('reads the admin secret from the file, trailing newline trimmed', () => {
    const path = secretFile('admin-secret', 'a-32-character-admin-secret-from-a-file\n');
    expect(ok('all', `--admin-secret=file:${path}`).adminSecret).toBe('a-32-character-admin-secret-from-a-file');
  });

  it('accepts the `--flag file:/path` spelling and CRLF endings', () => {
    const path = secretFile('client-secret', 'client-secret-from-file\r\n');
    expect(ok('all', '--client-secret', `file:${path}`).clientSecret).toBe('client-secret-from-file');
  });

  it('keeps inner line breaks of a PEM key read from a file', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nAAAA\nBBBB\n-----END PRIVATE KEY-----\n';
    const path = secretFile('db-key.pem', pem);
    expect(ok('all', `--database-cert-key=file:${path}`).databaseCertKey).toBe(pem.trimEnd());
  });

  it('joins repeated --encryption-key files into one key ring, in order', () => {
    const a = secretFile('key-a', 'first-key-of-the-ring-32-characters\n');
    const b = secretFile('key-b', 'second-key-of-the-ring-32-characters\n');
    const config = ok('all', `--encryption-key=file:${a}`, `--encryption-key=file:${b}`);
    expect(config.encryptionKey).toBe('first-key-of-the-ring-32-characters,second-key-of-the-ring-32-characters');
  });

  it('reads URLs carrying passwords (database, Redis, NATS) for a split service', () => {
    const db = secretFile('database-url', 'postgres://gatehouse:pa55@db:5432/gatehouse\n');
    const redis = secretFile('redis-url', 'redis://:pa55@cache:6379\n');
    const nats = secretFile('nats-url', 'nats://user:pa55@nats:4222\n');
    const config = ok('authz', '--database-type=postgres', `--database-url=file:${db}`, `--redis-url=file:${redis}`, `--nats-url=file:${nats}`);
    expect(config).toMatchObject({
      databaseUrl: 'postgres://gatehouse:pa55@db:5432/gatehouse', redisUrl: 'redis://:pa55@cache:6379', natsUrl: 'nats://user:pa55@nats:4222',
    });
  });

  it('takes file: on every secret flag of the registry', () => {
    const secrets = registryEntries().filter(([, s]) => s.secret === true && s.commands.includes('all'));
    expect(secrets.length).toBeGreaterThanOrEqual(15);
    for (const [key, spec] of secrets) {
      const name = flagName(spec);
      const path = secretFile(`each-${key}`, 'value-read-from-the-file\n');
      const seen: string[] = [];
      const result = loadConfig('all', [...argvFor('all'), `${name}=file:${path}`], {
        readFile: (p) => { seen.push(p); return 'value-read-from-the-file\n'; },
      });
      // the value may then fail the flag's own rules (a URL, a PEM); what matters is that the file was read, not the path parsed
      expect({ name, seen }).toEqual({ name, seen: [path] });
      expect(result.errors.join(' ')).not.toContain(path);
    }
  });

  it('reads a PEM flag that is no secret (a public key, a CA certificate) from file: too', () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pub = secretFile('jwt-public.pem', publicKey.export({ type: 'spki', format: 'pem' }) as string);
    const key = secretFile('jwt-private.pem', privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    const config = ok('all', '--jwt-type=ES256', '--jwt-secret=', `--jwt-private-key=file:${key}`, `--jwt-public-key=file:${pub}`);
    expect(config.jwtPublicKey).toBe((publicKey.export({ type: 'spki', format: 'pem' }) as string).trimEnd());
    expect(load(`--database-ca-cert=file:${join(dir, 'absent-ca.pem')}`).errors).toEqual([
      `--database-ca-cert: cannot read the file ${join(dir, 'absent-ca.pem')} (ENOENT)`,
    ]);
  });

  it('leaves file: alone on flags that are not secret', () => {
    expect(ok('all', '--organization-name=file:/not/read').organizationName).toBe('file:/not/read');
  });
});

describe('a secret file that cannot be used stops start-up with a line naming the flag', () => {
  it('missing file', () => {
    expect(load(`--admin-secret=file:${join(dir, 'absent')}`).errors).toEqual([
      `--admin-secret: cannot read the secret file ${join(dir, 'absent')} (ENOENT)`,
    ]);
  });

  it('a path that is not a readable file (a directory)', () => {
    expect(load(`--jwt-secret=file:${dir}`).errors).toEqual([`--jwt-secret: cannot read the secret file ${dir} (EISDIR)`]);
  });

  it('empty file', () => {
    const path = secretFile('empty', '\n');
    expect(load(`--admin-secret=file:${path}`).errors).toEqual([`--admin-secret: the secret file ${path} is empty`]);
  });

  it('file: without a path', () => {
    expect(load('--admin-secret=file:').errors).toEqual([
      '--admin-secret: "file:" needs a path, e.g. --admin-secret=file:/etc/gatehouse/secrets/admin-secret',
    ]);
  });
});

describe('help', () => {
  it('says how secret flags take a file', () => {
    const text = helpText('authn');
    expect(text).toContain('also takes file:/path');
    expect(text).toMatch(/--admin-secret <secret>[\s\S]*?\(secret; or file:\/path to read it from a file\)/);
  });
});
