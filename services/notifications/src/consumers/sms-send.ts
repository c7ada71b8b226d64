/**
 * @module @gatehouse/notifications/consumers/sms-send
 * The `sms.send` consumer: one text message per job through Twilio, with the same attempt records,
 * idempotency and retries as email (consumers/delivery.ts; ARCHITECTURE §4, behaviour.md §4.4).
 * Attempt records hold the phone number, never the code.
 */
import type { KeyRing } from '@gatehouse/crypto';
import type { Delivery, Envelope } from '@gatehouse/bus';
import type { Logger } from '@gatehouse/observability';
import type { DeliveryCounter } from '../metrics.ts';
import { parseSmsJob, SMS_EVENT, smsBody } from '../sms-job.ts';
import type { DeliveryStore } from '../storage/storage.ts';
import { isPermanentTwilioFailure, type OutgoingSms, type SmsSender } from '../twilio/sender.ts';
import { createDeliveryHandler } from './delivery.ts';

export interface SmsSendDeps {
  readonly store: DeliveryStore;
  readonly sender: SmsSender;
  readonly logger: Logger;
  readonly deliveries: DeliveryCounter;
  /** opens the sealed code of a job (libs/crypto `jobSealKey`); absent: sealed jobs are dead-lettered */
  readonly jobKey?: KeyRing | undefined;
  /** Unix seconds; injectable for tests */
  readonly now?: (() => number) | undefined;
}

/** Builds the handler given to `Bus.consume` for `sms.send`. */
export function createSmsSendHandler(deps: SmsSendDeps): (envelope: Envelope, delivery: Delivery) => Promise<void> {
  return createDeliveryHandler<OutgoingSms>(deps, {
    channel: 'sms',
    eventNameOf: (data) => (typeof data === 'object' && data !== null ? SMS_EVENT : 'invalid'),
    recipientOf: (data) => {
      const to = (data as Partial<Record<string, unknown>> | null)?.['to'];
      return typeof to === 'string' ? to : '';
    },
    async prepare(data) {
      const job = parseSmsJob(data, deps.jobKey);
      return { to: job.to, body: smsBody(job.otp) };
    },
    send: async (sms) => (await deps.sender.send(sms)).sid,
    isPermanent: isPermanentTwilioFailure,
  });
}
