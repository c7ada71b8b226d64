/**
 * The part of `oidc-provider` (panva; no bundled types) that the tests' upstream identity providers use:
 * libs/testing/src/oidc-idp.ts (an org's IdP) and test/support/social-standins.ts (the OIDC social
 * providers' stand-ins).
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

  /** An interaction's state (`Provider#interactionDetails`). */
  interface InteractionDetails {
    uid: string;
    prompt: { name: string; details: Record<string, unknown> };
    params: { client_id: string; [key: string]: string | undefined };
    session: { accountId: string };
    grantId?: string;
  }

  /** A consent grant (`provider.Grant`). */
  class Grant {
    constructor(init: { accountId: string; clientId: string });
    static find(id: string): Promise<Grant>;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): RequestListener;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
    Grant: typeof Grant;
    AccessToken: { find(token: string): Promise<{ accountId: string } | undefined> };
  }
}
