/**
 * @module @gatehouse/testing/certs
 * Keys and X.509 certificates for tests, made by the system `openssl` (no key or certificate is
 * committed): a self-signed RSA-2048 certificate (a SAML IdP's signing pair), and a test CA with a
 * server certificate for 127.0.0.1/localhost (an HTTPS IdP the server trusts through NODE_EXTRA_CA_CERTS).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair { key: string; cert: string }

function inTemp<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-certs-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const openssl = (args: string[]): void => { execFileSync('openssl', args, { stdio: 'pipe' }); };

/** A self-signed RSA-2048 certificate for `cn`, valid one day; PEM key (PKCS#8) and certificate. */
export function selfSigned(cn: string): KeyPair {
  return inTemp((dir) => {
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${cn}`, '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')]);
    return { key: readFileSync(join(dir, 'k.pem'), 'utf8'), cert: readFileSync(join(dir, 'c.pem'), 'utf8') };
  });
}

/** A test CA and a server certificate it issued for localhost and 127.0.0.1. */
export function caAndServer(): { ca: KeyPair; server: KeyPair } {
  return inTemp((dir) => {
    const p = (f: string) => join(dir, f);
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=Gatehouse Test CA', '-keyout', p('ca.key'), '-out', p('ca.pem'),
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', p('s.key'), '-out', p('s.csr')]);
    writeFileSync(p('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
    openssl(['x509', '-req', '-in', p('s.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', p('ext.cnf'), '-out', p('s.pem')]);
    return {
      ca: { key: readFileSync(p('ca.key'), 'utf8'), cert: readFileSync(p('ca.pem'), 'utf8') },
      server: { key: readFileSync(p('s.key'), 'utf8'), cert: readFileSync(p('s.pem'), 'utf8') },
    };
  });
}
