/**
 * @module @gatehouse/admin/domain/deps
 * What the admin domain is built from: its store, the outbound guard (behaviour.md §5.6) as plain
 * functions, the clock and the logger.
 */
import type { Logger } from '@gatehouse/observability';
import type { AdminStore } from '../storage/ports.ts';

/** The outbound side of webhooks (libs/delivery in main.ts, a fake in unit tests). */
export interface Outbound {
  /**
   * The save-time §5.6 check.
   * @throws AppError `invalid_argument` `empty endpoint not allowed` / `invalid endpoint: <reason>`
   */
  checkEndpoint(endpoint: string): Promise<void>;
  /**
   * One guarded POST with a 10 s timeout and no redirects.
   * @returns the status and the first 64 KiB of the body
   * @throws `{ kind: 'ssrf' | 'transport', message }` when no HTTP response was received
   */
  post(p: { url: string; headers: Record<string, string>; body: string }): Promise<{ status: number; body: string }>;
}

export interface AdminDomain {
  store: AdminStore;
  outbound: Outbound;
  logger: Logger;
  /** Unix seconds */
  now(): number;
}
