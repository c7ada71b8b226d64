/**
 * @module test/e2e/saml-support
 * Helpers of the SAML end-to-end tests: a peer's own RSA key and self-signed certificate.
 */
import { generateKeyPairSync } from 'node:crypto';

/**
 * A test peer's own RSA-2048 key (node:crypto, PKCS#8 PEM) and a self-signed certificate for it
 * (node-forge, SHA-256, valid one day), as a SAML SP or IdP of another party holds.
 * @param cn the certificate's subject and issuer common name
 */
export async function peerKeyPair(cn = 'node-saml test SP'): Promise<{ key: string; cert: string }> {
  const forge = (await import('node-forge')).default;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject([{ name: 'commonName', value: cn }]);
  cert.setIssuer([{ name: 'commonName', value: cn }]);
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { key: privateKey, cert: forge.pki.certificateToPem(cert) };
}
