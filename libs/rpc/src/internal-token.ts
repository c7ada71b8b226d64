/**
 * @module @gatehouse/rpc/internal-token
 * The gateway-only credential (graphql.md §5.3): services trust forwarded client IPs and serve their
 * subgraphs only to callers presenting it. Derived from `--client-secret`, which every process of a
 * deployment is given, so no extra flag or secret store is needed.
 */
import { createHmac } from 'node:crypto';

/** HMAC-SHA-256(client secret, "gatehouse/internal/v1") as lower-case hex. */
export function deriveInternalToken(clientSecret: string): string {
  return createHmac('sha256', clientSecret).update('gatehouse/internal/v1').digest('hex');
}
