/** @module @gatehouse/authz domain: the transport-free authorization engine API (behaviour.md §7). */
export { createEngine } from './engine.ts';
export type { CheckResult, Engine, EngineStats } from './engine.ts';
export { PARTIAL_FETCH_LIMIT } from './engine.ts';
export { parseSubject, parseCheckSubject, parseUser, splitObject } from './object-ref.ts';
export type { Tuple, UserRef } from './object-ref.ts';
export type { CheckInput } from './queries.ts';
export { MAX_CHECKS } from './queries.ts';
export type { ReadQuery } from './tuple.ts';
export { MAX_TUPLES_PER_CALL } from './tuple.ts';
export { MAX_RESOLUTION_DEPTH } from './check.ts';
export { LIST_CAP } from './list.ts';
export { MAX_DSL_BYTES, parseDsl } from './model-dsl.ts';
export { AGENT_TYPE, agentSubject, declaresAgentType, intersectChecks, intersectPermissions, type DelegatedPermissions, type PermissionList } from './delegation.ts';
export { TupleConflictError, type WriteConflicts } from '../storage/ports.ts';
