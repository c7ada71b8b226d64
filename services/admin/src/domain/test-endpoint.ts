/**
 * @module @gatehouse/admin/domain/test-endpoint
 * `test_endpoint` (behaviour.md §5.4): one real, unsigned POST of a synthetic event, 10 s timeout,
 * no retries, no redirects, no log row, under the §5.6 guard.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '@gatehouse/errors';
import type { AdminDomain } from './deps.ts';
import { syntheticData, webhookBody } from './payload.ts';
import { descriptionOf, endpointText, eventNameOf, headersOf } from './webhook-input.ts';

export interface TestEndpointInput {
  eventName?: string | null;
  endpoint?: string | null;
  eventDescription?: string | null;
  headers?: unknown;
}

/**
 * @returns the receiver's status and the first 64 KiB of its body; `{0, <error text>}` on a transport failure
 * @throws AppError `invalid_argument` (event name, endpoint, headers, the §5.6 guard)
 */
export async function testEndpoint(d: AdminDomain, input: TestEndpointInput): Promise<{ httpStatus: number; response: string }> {
  const eventName = eventNameOf(input.eventName);
  const endpoint = endpointText(input.endpoint);
  const headers = headersOf(input.headers);
  await d.outbound.checkEndpoint(endpoint);
  const now = d.now();
  const body = webhookBody({
    deliveryId: randomUUID(), webhookId: null, eventName, eventDescription: descriptionOf(input.eventDescription, eventName),
    createdAt: now, data: syntheticData(eventName, now),
  });
  try {
    const res = await d.outbound.post({
      url: endpoint,
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Gatehouse-Webhook/1' },
      body,
    });
    return { httpStatus: res.status, response: res.body };
  } catch (err) {
    const e = err as { kind?: string; message?: string };
    // the name re-resolved to a refused address after the save-time check
    if (e.kind === 'ssrf') throw new AppError('invalid_argument', `invalid endpoint: ${(e.message ?? '').replace(/^SSRF validation failed: /, '')}`);
    return { httpStatus: 0, response: e.message ?? String(err) };
  }
}
