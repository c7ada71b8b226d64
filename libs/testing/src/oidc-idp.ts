/**
 * @module @gatehouse/testing/oidc-idp
 * A real OpenID Provider for tests: panva's `oidc-provider` (OpenID-certified) over HTTPS on
 * 127.0.0.1, with a certificate from a test CA (certs.ts) that the server under test trusts through
 * `NODE_EXTRA_CA_CERTS`. It uses the library's development login and consent pages: any login name
 * is accepted as the account id, and the account's claims are `email` = the login name
 * (`email_verified: true`) and the names given to {@link startOidcIdp}.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { KeyPair } from './certs.ts';

export interface OidcIdpClient { client_id: string; client_secret: string; redirect_uris: string[] }

export interface TestOidcIdp {
  /** `https://127.0.0.1:<port>`: the issuer and discovery base */
  issuer: string;
  close(): Promise<void>;
}

/**
 * Starts the provider on a free port.
 * @param tls the server's key and certificate (issued for 127.0.0.1)
 * @param clients the registered relying parties (client_secret_basic, code flow, PKCE)
 * @param names given/family name of every account
 */
export async function startOidcIdp(tls: KeyPair, clients: OidcIdpClient[], names = { given_name: 'Ida', family_name: 'Provider' }): Promise<TestOidcIdp> {
  const server: Server = createServer({ key: tls.key, cert: tls.cert });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ ...c, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' })),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    cookies: { keys: ['gatehouse-test-cookie-key'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: id, email_verified: true, ...names }),
    }),
    features: { devInteractions: { enabled: true } },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
