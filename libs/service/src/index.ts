/**
 * @module @gatehouse/service
 * The service module every service exports, and the two ways of running a list of them: one process
 * each (`runService`, split mode) or all in one (`buildInProcess`). See docs/architecture.md.
 */
export { descriptorsOf } from './module.ts';
export type { PeerClient, ServiceModule, ServiceModuleName, ServiceRuntime, ServiceShared } from './module.ts';
export { addressKeyOf, runService } from './run.ts';
export { buildInProcess } from './in-process.ts';
export type { BuiltService } from './in-process.ts';
export { INVALIDATION_POLL_MS, invalidationFor } from './invalidation.ts';
