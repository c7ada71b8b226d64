/** @module memory.test: the in-memory DeliveryStore passes the conformance suite. */
import { createMemoryDeliveryStore } from './memory.ts';
import { describeDeliveryStore } from './storage.suite.ts';

describeDeliveryStore('memory', async () => ({ store: createMemoryDeliveryStore(), close: async () => undefined }));
